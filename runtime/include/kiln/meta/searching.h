#ifndef KILN_RUNTIME_INCLUDE_KILN_META_SEARCHING_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_SEARCHING_H_
// The meta steps of the search and histogram ops (ops/searching.yaml): PyTorch 1.13's argument
// checks and messages, the result's shape and dtype, and what the kernels walk:
//   void kiln::<backend>::<kernel>(const meta::<Plan>& plan, const TensorBase& out, <the op's arguments>)
// with every Tensor argument contiguous (an undefined Tensor? stays undefined) and `out`
// contiguous, of plan.sizes and plan.dtype.
//
// searchsorted / bucketize (`meta: searchsorted`, `bucketize`): `rows` rows of `row_len`
// sorted values (one row for a 1-D sequence, shared by every value), each searched by
// `per_row` values; the kernels compare in plan.compare_dtype (both inputs promoted, as PyTorch).
// histc (`meta: histc`): plan.bins bins over [lo, hi]; `from_data` when min == max, where the
// kernel takes the range from the data (min - 1, max + 1 when they are equal) and checks it.
// _bincount (`meta: bincount`): plan.length bins; counts are int64, weights sum in their dtype.
#include <optional>
#include <string_view>
#include "kiln/scalar.h"
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct SearchPlan {
  DimVector sizes;                     // of the result: the values'
  DType dtype = DType::Int64;          // of the result: int64, or int32 with out_int32
  DType compare_dtype = DType::Int64;  // both inputs are compared in it
  int64_t rows = 1;                    // rows of the sequence (1: one row shared by every value)
  int64_t row_len = 0;                 // sequence values per row
  int64_t per_row = 0;                 // values searched in each row (all of them for one row)
  bool right = false;                  // first index whose value is > (else >=) the searched one
};

SearchPlan searchsorted(const char* op, const TensorBase& sorted_sequence, const TensorBase& self, bool out_int32,
                        bool right, std::optional<std::string_view> side, const TensorBase& sorter);
SearchPlan bucketize(const char* op, const TensorBase& self, const TensorBase& boundaries, bool out_int32, bool right);

struct HistcPlan {
  DimVector sizes;  // {bins}
  DType dtype = DType::Float32;
  int64_t bins = 0;
  double lo = 0, hi = 0;   // the range, when given
  bool from_data = false;  // min == max: the kernel takes the range from the data
};

HistcPlan histc(const char* op, const TensorBase& self, int64_t bins, const Scalar& min, const Scalar& max);

// histc's range from the data's extremes, as PyTorch: [min - 1, max + 1] when they are equal
// (an empty tensor gives [-1, 1]); ValueError naming `op` when it is not finite.
void histc_range_from_data(const char* op, bool empty, double data_min, double data_max, double* lo, double* hi);

struct BincountPlan {
  DimVector sizes;  // {length}
  DType dtype = DType::Int64;
  int64_t length = 0;
};

BincountPlan bincount(const char* op, const TensorBase& self, int64_t length, const TensorBase& weights);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_SEARCHING_H_
