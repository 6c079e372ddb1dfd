#ifndef KILN_RUNTIME_INCLUDE_KILN_META_REDUCTION_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_REDUCTION_H_
// The meta step of the reduction family (`meta: reduction` in ops/*.yaml: sum, mean, prod, amax,
// max.dim, argmax, var, norm, logsumexp, all, any, count_nonzero, nansum, ...). It runs once,
// before any backend: which dims are reduced, the result's shape and dtype, the dtype the
// input is read in, and PyTorch's errors (repeated dims, empty reductions without identity).
// A reduction kernel then only computes:
//   void kiln::<backend>::<kernel>(const meta::ReducePlan& plan, const TensorBase& out[, const TensorBase& indices],
//                                  const TensorBase& self[, other arguments])
// where `self` has plan.in_dtype (any layout), and `out` (and `indices`, int64) are
// contiguous tensors of plan.sizes on self's device.
#include <optional>
#include "kiln/tensor_base.h"

namespace kiln::meta {

// How the result dtype follows from self's (`result_dtype:` in ops/*.yaml).
enum class ReduceResult {
  Self,        // self's dtype (amax, logsumexp)
  Inexact,     // self's, or dtype= which must be floating or complex (mean, nanmean)
  Accumulate,  // dtype=, else an out= destination's, else int64 for bool and integers (sum, prod)
  Real,        // complex -> real (var, norm)
  Logical,     // bool, or uint8 for uint8 inputs (all, any: PyTorch 1.13 keeps that)
  Int64,       // counts and indices (count_nonzero, argmax)
};

struct ReducePlan {
  SmallVector<uint8_t, 8> reduced;  // per input dim: 1 when reduced
  DimVector sizes;                  // of the result (keepdim applied)
  int64_t reduced_numel = 1;        // elements combined into each output
  bool all_dims = false;            // every dim reduced (no dim given, or an empty list)
  DType dtype = DType::Float32;     // the result's
  DType in_dtype = DType::Float32;  // what the kernel reads: self's, or dtype= (PyTorch casts first)
};

struct ReduceOptions {
  ReduceResult result = ReduceResult::Self;
  bool has_identity = true;  // false: reducing an empty dim raises, as max/min/argmax do
};

// `dims` empty (or None) reduces every dim; dims wrap, may appear once, and a 0-d tensor takes 0
// or -1 (reducing nothing).
ReducePlan reduction(const char* op, const TensorBase& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype,
                     ReduceOptions options, std::optional<DType> destination);
inline ReducePlan reduction(const char* op, const TensorBase& self, const OptIntList& dims, bool keepdim,
                            std::optional<DType> dtype, ReduceOptions options, std::optional<DType> destination) {
  return reduction(op, self, dims.has_value() ? dims.value() : IntArrayRef(), keepdim, dtype, options, destination);
}
// One dim, or none (max.dim, all.dim, argmax(dim=None): every dim).
inline ReducePlan reduction(const char* op, const TensorBase& self, std::optional<int64_t> dim, bool keepdim,
                            std::optional<DType> dtype, ReduceOptions options, std::optional<DType> destination) {
  return dim ? reduction(op, self, IntArrayRef(*dim), keepdim, dtype, options, destination)
             : reduction(op, self, IntArrayRef(), keepdim, dtype, options, destination);
}

// The input a reduction kernel reads: `self`, cast to plan.in_dtype when it differs (the layout
// is kept; reduction kernels take any strides).
TensorBase reduction_input(const ReducePlan& plan, const TensorBase& self);

// norm's p as a number (2 when None); a complex p is a ValueError.
double norm_order(const char* op, const std::optional<Scalar>& p);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_REDUCTION_H_
