// The reduction family's meta step (see kiln/meta/reduction.h).
#include "kiln/meta/reduction.h"
#include "kiln/meta/inputs.h"

namespace kiln::meta {
namespace {

DType result_dtype(DType in, std::optional<DType> dtype, ReduceResult rule, std::optional<DType> destination) {
  switch (rule) {
    case ReduceResult::Accumulate:
      if (dtype) return *dtype;
      if (destination) return *destination;
      return is_integral(in, /*include_bool=*/true) ? DType::Int64 : in;
    case ReduceResult::Real: return to_real(in);
    case ReduceResult::Logical: return in == DType::UInt8 ? DType::UInt8 : DType::Bool;
    case ReduceResult::Int64: return DType::Int64;
    case ReduceResult::Self:
    case ReduceResult::Inexact: break;
  }
  return in;
}

}  // namespace

ReducePlan reduction(const char* op, const TensorBase& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype,
                     ReduceOptions options, std::optional<DType> destination) {
  const int64_t nd = self.dim();
  ReducePlan r;
  r.all_dims = dims.empty();
  r.reduced.resize(size_t(nd), uint8_t(r.all_dims ? 1 : 0));
  const int64_t wrap_nd = nd == 0 ? 1 : nd;
  SmallVector<uint8_t, 8> seen(size_t(wrap_nd), uint8_t(0));
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, wrap_nd, op, "dim");
    KILN_CHECK(!seen[size_t(w)], ValueError, op, "dim", "dim ", w, " appears multiple times in the list of dims");
    seen[size_t(w)] = 1;
    if (nd > 0) r.reduced[size_t(w)] = 1;
  }
  IntArrayRef sizes = self.sizes();
  for (int64_t d = 0; d < nd; ++d) {
    if (r.reduced[size_t(d)]) {
      r.reduced_numel *= sizes[size_t(d)];
      if (keepdim) r.sizes.push_back(1);
    } else {
      r.sizes.push_back(sizes[size_t(d)]);
    }
  }
  if (!options.has_identity) {
    if (r.all_dims) {
      KILN_CHECK(self.numel() != 0, IndexError, op, "self", op,
                 "(): Expected reduction dim to be specified for input.numel() == 0. "
                 "Specify the reduction dim with the 'dim' argument.");
    } else {
      for (int64_t d = 0; d < nd; ++d)
        KILN_CHECK(!r.reduced[size_t(d)] || sizes[size_t(d)] != 0, IndexError, op, "dim", op,
                   "(): Expected reduction dim ", d, " to have non-zero size.");
    }
  }
  if (options.result == ReduceResult::Inexact)
    KILN_CHECK(!dtype || is_inexact(*dtype), DTypeError, op, "dtype", op,
               "(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. "
               "Got: ", dtype_name(*dtype));
  // dtype= (and for sums an out= tensor's dtype) casts the input first, as PyTorch does.
  r.in_dtype = dtype ? *dtype : self.dtype();
  if (options.result == ReduceResult::Accumulate && !dtype && destination) r.in_dtype = *destination;
  r.dtype = result_dtype(r.in_dtype, dtype, options.result, destination);
  return r;
}

// The engines walk any strides: only the dtype may need a copy.
TensorBase reduction_input(const ReducePlan& plan, const TensorBase& self) {
  return input_as(self, plan.in_dtype, false);
}

double norm_order(const char* op, const std::optional<Scalar>& p) {
  KILN_CHECK(!p || !p->is_complex(), ValueError, op, "p", "expected p to be an integer or float, got ", p->str());
  return p ? p->to_double() : 2.0;
}

}  // namespace kiln::meta
