// nansum, nanmean and aminmax on CPU: NaN-skipping sums, and the min and max of one reduction
// (two passes of the max/min reducer; NaN propagates as in amax/amin).
#include <vector>
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/reducers.h"

namespace kiln::cpu {
namespace {

// Non-NaN elements per output, as a double (nanmean's divisor).
template <typename T>
struct CountNotNaNReducer {
  using in_t = T;
  using acc_t = double;
  double* out;
  acc_t init(int64_t) const { return 0; }
  acc_t identity(const acc_t&) const { return 0; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a += is_nan(x) ? 0.0 : 1.0; }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, const acc_t& a) const { out[o] = a; }
};

}  // namespace

void nansum(const meta::ReducePlan& plan, const Tensor& out, const Tensor& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(self.data_ptr());
    if (plan.dtype == self.dtype()) {
      SumReducer<T, T, false, true> red{static_cast<T*>(out.data_ptr())};
      run_reduce(loops, src, red);
    } else if constexpr (is_integral(dtype_of<T>, true)) {  // integers accumulate into int64
      SumReducer<T, int64_t, false, true> red{static_cast<int64_t*>(out.data_ptr())};
      run_reduce(loops, src, red);
    } else {
      KILN_FAIL(InternalError, "nansum", "dtype", "unexpected result dtype ", dtype_name(plan.dtype));
    }
  });
}

void nanmean(const meta::ReducePlan& plan, const Tensor& out, const Tensor& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // nanmean is declared for floating dtypes only
      const T* src = static_cast<const T*>(self.data_ptr());
      std::vector<double> counts(size_t(loops.out_numel));
      CountNotNaNReducer<T> count{counts.data()};
      run_reduce(loops, src, count);
      T* y = static_cast<T*>(out.data_ptr());
      SumReducer<T, T, false, true> sum{y};
      run_reduce(loops, src, sum);
      using M = opmath_t<T>;  // the rounded sum divided in T's compute type, as mean
      for (int64_t o = 0; o < loops.out_numel; ++o) y[o] = T(M(y[o]) / M(counts[size_t(o)]));
    }
  });
}

void aminmax(const meta::ReducePlan& plan, const Tensor& min, const Tensor& max, const Tensor& self) {
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
