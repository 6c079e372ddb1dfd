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

// Runs Reducer<T> over `in` into `out`: T, or int64 for the integer promotion of sum/prod.
template <template <typename> class Reducer>
void reduce_to(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& in, bool mean = false) {
  ReduceLoops loops = make_reduce_loops(in, plan);
  const bool widened = sum_widened(plan, in, "reduce");
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Reducer<T> red{SumResult<T>{out.data_ptr(), widened, mean, plan.reduced_numel}};
    run_reduce(loops, static_cast<const T*>(in.data_ptr()), red);
  });
}

template <typename T>
using Sum = SumReducer<T>;
template <typename T>
using Prod = ProdReducer<T>;

}  // namespace

void sum(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Sum>(plan, out, self);
}

void mean(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Sum>(plan, out, self, /*mean=*/true);
}

void prod(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Prod>(plan, out, self);
}

void prod_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  reduce_to<Prod>(plan, out, self);
}

}  // namespace kiln::cpu
