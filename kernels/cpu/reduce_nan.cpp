// nansum, nanmean and aminmax on CPU: NaN-skipping sums, and the min and max of one reduction
// (two passes of the max/min reducer; NaN propagates as in amax/amin).
#include <vector>
#include "kiln/gen/kernels/cpu/aminmax.h"
#include "kiln/gen/kernels/cpu/nanmean.h"
#include "kiln/gen/kernels/cpu/nansum.h"
#include "reducers.h"

namespace kiln::cpu {

void nansum(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  const bool widened = sum_widened(plan, self, "nansum");  // integers accumulate into int64
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    SumReducer<T, true> red{SumResult<T>{out.data_ptr(), widened}};
    run_reduce(loops, static_cast<const T*>(self.data_ptr()), red);
  });
}

void nanmean(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // nanmean is declared for floating dtypes only
      const T* src = static_cast<const T*>(self.data_ptr());
      std::vector<double> counts(size_t(loops.out_numel));
      CountReducer<T, IsNotNaN, double> count{counts.data()};
      run_reduce(loops, src, count);
      T* y = static_cast<T*>(out.data_ptr());
      SumReducer<T, true> sum{SumResult<T>{y}};
      run_reduce(loops, src, sum);
      using M = opmath_t<T>;  // the rounded sum divided in T's compute type, as mean
      for (int64_t o = 0; o < loops.out_numel; ++o) y[o] = T(M(y[o]) / M(counts[size_t(o)]));
    }
  });
}

void aminmax(const meta::ReducePlan& plan, const TensorBase& min, const TensorBase& max, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T>) {  // aminmax is declared for real dtypes only
      const T* src = static_cast<const T*>(self.data_ptr());
      MinMaxReducer<T, false> lo{static_cast<T*>(min.data_ptr())};
      run_reduce(loops, src, lo);
      MinMaxReducer<T, true> hi{static_cast<T*>(max.data_ptr())};
      run_reduce(loops, src, hi);
    }
  });
}

}  // namespace kiln::cpu
