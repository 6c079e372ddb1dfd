// sum, mean, prod and prod.dim_int on CPU.
// PyTorch rules: bool/integer inputs accumulate and return int64 unless dtype= is given;
// dtype= casts the input first; mean needs a floating or complex result dtype.
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/reducers.h"

namespace kiln::cpu {
namespace {

// Runs Reducer<T, Out> over `in` into a fresh `out_dtype` tensor. Out is T, or int64 for the
// integer promotion of sum/prod.
template <template <typename, typename> class Reducer, typename Configure>
Tensor reduce_to(const Tensor& in, const ReduceDims& rd, DType out_dtype, Configure&& configure) {
  Tensor out = empty(rd.out_sizes, TensorOptions(out_dtype));
  ReducePlan plan = make_reduce_plan(in, rd);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(in.data_ptr());
    if (out_dtype == in.dtype()) {
      Reducer<T, T> red{static_cast<T*>(out.data_ptr())};
      configure(red);
      run_reduce(plan, src, red);
    } else if constexpr (is_integral(dtype_of<T>, true)) {
      Reducer<T, int64_t> red{static_cast<int64_t*>(out.data_ptr())};
      configure(red);
      run_reduce(plan, src, red);
    } else {
      KILN_FAIL(InternalError, "reduce", "dtype", "unexpected result dtype ", dtype_name(out_dtype));
    }
  });
  return out;
}

template <typename T, typename Out> using Sum = SumReducer<T, Out, false>;
template <typename T, typename Out> using Mean = SumReducer<T, Out, true>;
template <typename T, typename Out> using Prod = ProdReducer<T, Out>;
constexpr auto no_config = [](auto&) {};

}  // namespace

Tensor sum(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  ReduceDims rd = reduce_dims(self, dim, keepdim, "sum");
  Tensor in = dtype ? cast_if_needed(self, *dtype) : self;
  return reduce_to<Sum>(in, rd, sum_result_dtype(self.dtype(), dtype), no_config);
}

Tensor mean(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  KILN_CHECK(!dtype || is_inexact(*dtype), DTypeError, "mean", "dtype",
             "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
             "complex dtype. Got: ", dtype_name(*dtype));
  ReduceDims rd = reduce_dims(self, dim, keepdim, "mean");
  Tensor in = dtype ? cast_if_needed(self, *dtype) : self;
  const int64_t count = rd.reduced_numel;
  return reduce_to<Mean>(in, rd, in.dtype(), [count](auto& red) { red.count = count; });
}

Tensor prod(const Tensor& self, std::optional<DType> dtype) {
  ReduceDims rd = reduce_dims(self, IntArrayRef(), false, "prod");
  Tensor in = dtype ? cast_if_needed(self, *dtype) : self;
  return reduce_to<Prod>(in, rd, sum_result_dtype(self.dtype(), dtype), no_config);
}

Tensor prod_dim(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  ReduceDims rd = reduce_one_dim(self, dim, keepdim, "prod");
  Tensor in = dtype ? cast_if_needed(self, *dtype) : self;
  return reduce_to<Prod>(in, rd, sum_result_dtype(self.dtype(), dtype), no_config);
}

}  // namespace kiln::cpu
