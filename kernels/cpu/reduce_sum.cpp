// sum, mean, prod and prod.dim_int on CPU. The meta step has chosen the result dtype (bool and
// integer inputs accumulate into int64 unless dtype= says otherwise) and cast the input to
// dtype= when given; mean divides the rounded sum by the count as PyTorch's does.
#include "kiln/gen/kernels/cpu/mean.h"
#include "kiln/gen/kernels/cpu/prod.h"
#include "kiln/gen/kernels/cpu/prod_dim.h"
#include "kiln/gen/kernels/cpu/sum.h"
#include "reducers.h"

namespace kiln::cpu {
namespace {

// Runs Reducer<T, Out> over `in` into `out`. Out is T, or int64 for the integer promotion of
// sum/prod.
template <template <typename, typename> class Reducer, typename Configure>
void reduce_to(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& in, Configure&& configure) {
  ReduceLoops loops = make_reduce_loops(in, plan);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(in.data_ptr());
    if (plan.dtype == in.dtype()) {
      Reducer<T, T> red{static_cast<T*>(out.data_ptr())};
      configure(red);
      run_reduce(loops, src, red);
    } else if constexpr (is_integral(dtype_of<T>, true)) {
      Reducer<T, int64_t> red{static_cast<int64_t*>(out.data_ptr())};
      configure(red);
      run_reduce(loops, src, red);
    } else {
      KILN_FAIL(InternalError, "reduce", "dtype", "unexpected result dtype ", dtype_name(plan.dtype));
    }
  });
}

template <typename T, typename Out> using Sum = SumReducer<T, Out, false>;
template <typename T, typename Out> using Mean = SumReducer<T, Out, true>;
template <typename T, typename Out> using Prod = ProdReducer<T, Out>;
constexpr auto no_config = [](auto&) {};

}  // namespace

void sum(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Sum>(plan, out, self, no_config);
}

void mean(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  const int64_t count = plan.reduced_numel;
  reduce_to<Mean>(plan, out, self, [count](auto& red) { red.count = count; });
}

void prod(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Prod>(plan, out, self, no_config);
}

void prod_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Prod>(plan, out, self, no_config);
}

}  // namespace kiln::cpu
