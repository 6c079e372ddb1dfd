#ifndef KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
// The meta step of the along-dim family (`meta: along_dim` in ops/*.yaml): ops that work along
// one dim and keep self's shape — scans (cumsum, cumprod, logcumsumexp), softmax and
// log_softmax. It runs once, before any backend, and decides everything that is not
// arithmetic: the wrapped dim, the result dtype, the result shape and the [outer, size, inner]
// split. A kernel then only computes:
//   void kiln::<backend>::<kernel>(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self
//                                  [, other tensors])
// where `self` is contiguous and already of plan.dtype, other tensors are contiguous in their
// own dtypes, and `out` is a contiguous tensor of plan.sizes and plan.dtype on self's device.
// The generated op code allocates it, or hands the kernel an out= tensor directly when it fits.
#include <optional>
#include "kiln/tensor_base.h"

namespace kiln::meta {

// A tensor seen as [outer, size, inner] around one dim (a 0-d one as [1, 1, 1]).
struct DimSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
// `sizes` split around the (already wrapped) dim.
DimSplit split_at_dim(IntArrayRef sizes, int64_t dim);

// How the result dtype follows from self's (`result_dtype:` in ops/*.yaml).
enum class AlongDimResult {
  Self,        // dtype= when given, else self's (cumsum's reverse of a float, logcumsumexp)
  Accumulate,  // dtype=, else an out= or in-place destination's, else int64 for bool and integers (cumsum, cumprod)
  Floating,    // dtype= when given, else self's; it must be a floating dtype (softmax, log_softmax)
};

struct AlongDimPlan {
  int64_t dim = 0;               // wrapped (0 for a 0-d tensor)
  DType dtype = DType::Float32;  // the result's, and the one the kernel computes in
  DimVector sizes;               // of the result: self's
  DimSplit split;                // self around dim
};

AlongDimPlan along_dim(const char* op, const TensorBase& self, int64_t dim, std::optional<DType> dtype,
                       AlongDimResult result, std::optional<DType> destination);

// A further tensor of an along-dim op (cummax's gradient takes `indices`) has self's shape;
// one named indices is int64.
void check_companion(const AlongDimPlan& plan, const char* op, const char* arg, const TensorBase& t);

// The input a kernel reads: `self` when it is contiguous and of plan.dtype, else a contiguous
// copy cast to it.
TensorBase along_dim_input(const AlongDimPlan& plan, const TensorBase& self);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
