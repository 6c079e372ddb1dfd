#ifndef KILN_RUNTIME_INCLUDE_KILN_META_SORTING_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_SORTING_H_
// The meta steps of the sorting and selection ops (ops/sorting.yaml): sort (`meta: sort`),
// topk (`meta: topk`), kthvalue (`meta: kthvalue`), median.dim / nanmedian.dim / mode
// (`meta: select_dim`) and median() / nanmedian() (`meta: select_all`). Each checks the
// arguments with PyTorch's messages, wraps dim and plans the lines a kernel walks:
//   void kiln::<backend>::<kernel>(const meta::SortPlan& plan, const TensorBase& values
//                                  [, const TensorBase& indices], const TensorBase& self, <the op's other args>)
// where self is contiguous, seen as [outer, size, inner] around plan.dim, and values/indices
// are contiguous tensors of plan.sizes (indices int64). Every line of `size` elements
// (stride `inner`) yields plan.take results: the first `take` of the line in the plan's order
// (sort, topk), or the one at rank `rank` (kthvalue, median.dim, nanmedian.dim; mode picks
// its own).
#include <optional>
#include "kiln/meta/along_dim.h"
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct SortPlan {
  int64_t dim = 0;               // wrapped (0 for a 0-d tensor)
  DimSplit split;                // self around dim
  DimVector sizes;               // of the results
  DType dtype = DType::Float32;  // of values: self's
  bool descending = false;       // largest first (sort descending, topk largest)
  int64_t take = 0;              // results per line (sort: the line, topk: k, selections: 1)
  int64_t rank = 0;              // kthvalue: k - 1 (median's rank depends on the line's NaNs)
};

// sort(self, dim, descending); sort.stable's `stable` must be given (PyTorch asserts it).
SortPlan sort(const char* op, const TensorBase& self, int64_t dim, bool descending);
SortPlan sort(const char* op, const TensorBase& self, std::optional<bool> stable, int64_t dim, bool descending);
// k in [0, size of dim].
SortPlan topk(const char* op, const TensorBase& self, int64_t k, int64_t dim, bool largest, bool sorted);
// k in [1, size of dim]; the dim is removed unless keepdim.
SortPlan kthvalue(const char* op, const TensorBase& self, int64_t k, int64_t dim, bool keepdim);
// One value per line (median.dim, nanmedian.dim, mode); the dim may not be empty.
SortPlan select_dim(const char* op, const TensorBase& self, int64_t dim, bool keepdim);
// One value over every element, as one line (median(), nanmedian()); a 0-d result.
SortPlan select_all(const char* op, const TensorBase& self);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_SORTING_H_
