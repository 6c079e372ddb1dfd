#ifndef KILN_RUNTIME_INCLUDE_KILN_META_INDEXING_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_INDEXING_H_
// The meta steps of the indexing ops (ops/indexing.yaml): PyTorch's argument checks and
// messages, the result's shape and dtype, and the geometry the kernels walk. Index *values* are
// checked by the kernels as they read them, before anything is written.
//
// gather/scatter (`meta: gather`, `scatter`, `scatter_add`, `scatter_reduce`): index has self's
// number of dims; the kernels walk index's shape, replacing the coordinate at `dim` by the index
// value on one side:
//   gather:  out[p]                      = self[p with p[dim] := index[p]]
//   scatter: out[p with p[dim] := index[p]] (op)= src[p]        (out starts as a copy of self)
// index_* (`meta: index_select`, `index_add`, `index_copy`, `index_fill`): self seen as
// [outer, size, inner] around dim, and `index` a vector of n entries along it:
//   index_select: out[o, i, :]        = self[o, index[i], :]
//   index_add:    out[o, index[i], :] += alpha * source[o, i, :]   (out starts as a copy of self)
// take/put (`meta: take`, `put`): self seen flat, negative indices counted from the end.
//   void kiln::<backend>::<kernel>(const meta::<Plan>& plan, const TensorBase& out, <the op's arguments>)
// Every tensor argument reaches the kernel contiguous; `out` is contiguous, of plan.sizes and
// plan.dtype.
#include <string_view>
#include "kiln/common/scatter_reduce_kind.h"
#include "kiln/meta/along_dim.h"
#include "kiln/scalar.h"
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct ScatterGatherPlan {
  int64_t dim = 0;  // wrapped (0 for 0-d tensors)
  DimVector sizes;  // of the result: index's (gather) or self's (scatter)
  DType dtype = DType::Float32;
  ScatterReduce reduce = ScatterReduce::None;
  bool include_self = true;  // scatter_reduce: whether self's value takes part in the reduction
};

ScatterGatherPlan gather(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                         bool sparse_grad);
ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const TensorBase& src);
ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const Scalar& value);
ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const TensorBase& src, std::string_view reduce);
ScatterGatherPlan scatter(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                          const Scalar& value, std::string_view reduce);
ScatterGatherPlan scatter_add(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                              const TensorBase& src);
ScatterGatherPlan scatter_reduce(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                                 const TensorBase& src, std::string_view reduce, bool include_self);

struct IndexPlan {
  int64_t dim = 0;  // wrapped (0 for 0-d tensors)
  DimSplit split;   // self around dim
  int64_t n = 0;    // index entries
  DimVector sizes;  // of the result
  DType dtype = DType::Float32;
};

IndexPlan index_select(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index);
IndexPlan index_add(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                    const TensorBase& source, const Scalar& alpha);
IndexPlan index_copy(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                     const TensorBase& source);
IndexPlan index_fill(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index, const Scalar& value);
IndexPlan index_fill(const char* op, const TensorBase& self, int64_t dim, const TensorBase& index,
                     const TensorBase& value);
IndexPlan take(const char* op, const TensorBase& self, const TensorBase& index);
IndexPlan put(const char* op, const TensorBase& self, const TensorBase& index, const TensorBase& source,
              bool accumulate);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_INDEXING_H_
