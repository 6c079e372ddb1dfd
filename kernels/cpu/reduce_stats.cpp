// var, norm and logsumexp on CPU.
// var is one Welford pass in double precision (kiln/common/welford.h): a constant slice gives
// exactly 0, as PyTorch, where a mean pass then a deviation pass would leave rounding noise of
// the mean squared (found by the fuzzer on an expanded tensor of -1e30). logsumexp subtracts the max as PyTorch does, replacing an
// infinite max by 0 so all -inf rows give -inf and +inf rows give +inf.
#include <vector>
#include "kiln/gen/kernels/cpu/logsumexp.h"
#include "kiln/gen/kernels/cpu/norm.h"
#include "kiln/gen/kernels/cpu/var.h"
#include "kiln/common/welford.h"
#include "reducers.h"
#include "vec_math.h"

namespace kiln::cpu {
namespace {

// Compute type of the statistics: double, or complex<double> for complex inputs.
template <typename T>
using stat_t = std::conditional_t<is_complex_v<T>, complex<double>, double>;

KILN_INLINE double abs2(double x) { return x * x; }
KILN_INLINE double abs2(complex<double> z) { return z.re * z.re + z.im * z.im; }

// var: Welford states per lane, merged in order; writes m2 / max(0, n - correction).
template <typename T, typename Out>
struct VarianceReducer {
  using in_t = T;
  using M = stat_t<T>;
  using acc_t = welford::State<M>;
  Out* out;
  double correction;
  acc_t init(int64_t) const { return {}; }
  acc_t identity(const acc_t&) const { return {}; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a = welford::combine(a, welford::of(convert<M>(x))); }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { a = welford::combine(a, b); }
  void write(int64_t o, const acc_t& a) const { out[o] = Out(a.m2 / std::max(0.0, a.n - correction)); }
};

enum class NormKind { Two, One, Zero, Inf, NegInf, General };

template <typename T, typename Out, NormKind K>
struct NormReducer {
  using in_t = T;
  using acc_t = double;
  Out* out;
  double p;
  int64_t count;
  static KILN_INLINE double magnitude(T x) { return abs_as_double(x); }
  acc_t init(int64_t) const { return identity(0.0); }
  acc_t identity(const acc_t&) const { return K == NormKind::NegInf ? std::numeric_limits<double>::infinity() : 0.0; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const {
    if constexpr (K == NormKind::Two) {
      a += abs2(convert<stat_t<T>>(x));
    } else if constexpr (K == NormKind::One) {
      a += magnitude(x);
    } else if constexpr (K == NormKind::Zero) {
      a += truthy(x) ? 1.0 : 0.0;
    } else if constexpr (K == NormKind::Inf) {
      double v = magnitude(x);
      a = (a != a || a >= v) ? a : v;
    } else if constexpr (K == NormKind::NegInf) {
      double v = magnitude(x);
      a = (a != a || a <= v) ? a : v;
    } else {
      a += std::pow(magnitude(x), p);
    }
  }
  void run(acc_t& a, const T* ptr, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, ptr, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const {
    if constexpr (K == NormKind::Inf) a = (a != a || a >= b) ? a : b;
    else if constexpr (K == NormKind::NegInf) a = (a != a || a <= b) ? a : b;
    else a += b;
  }
  void write(int64_t o, const acc_t& a) const {
    double v = a;
    if constexpr (K == NormKind::Two) v = std::sqrt(a);
    else if constexpr (K == NormKind::General) v = std::pow(a, 1.0 / p);
    else if constexpr (K == NormKind::Inf || K == NormKind::NegInf) v = count == 0 ? 0.0 : a;  // PyTorch: 0
    out[o] = Out(v);
  }
};

// Second pass of logsumexp: sum of exp(x - m) with m = max, or 0 when the max is infinite.
template <typename T>
struct ExpSumReducer {
  using in_t = T;
  using C = opmath_t<T>;  // exp in float for 16/32-bit inputs, double for float64
  struct acc_t {
    C shift{};
    double s = 0;
  };
  T* out;
  const C* maxes;  // indexed by output offset
  static C shift_of(C m) { return std::isinf(m) ? C(0) : m; }
  acc_t init(int64_t o) const { return {shift_of(maxes[o]), 0.0}; }
  acc_t identity(const acc_t& a) const { return {a.shift, 0.0}; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a.s += double(exp_c(C(x) - a.shift)); }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const {
    if constexpr (std::is_same_v<C, float>) {
      if (s == 1) {  // float partial sums of 1024 terms (vectorized exp), accumulated in double
        const float shift = a.shift;
        for (int64_t b = 0; b < n; b += 1024) {
          const int64_t e = std::min(n, b + 1024);
          float part = 0;
#pragma omp simd reduction(+ : part)
          for (int64_t i = b; i < e; ++i) part += vec_exp(float(p[i]) - shift);
          a.s += double(part);
        }
        return;
      }
    }
    run_by_lanes(*this, a, p, n, s, r);
  }
  void merge(acc_t& a, const acc_t& b) const { a.s += b.s; }
  void write(int64_t o, const acc_t& a) const { out[o] = T(C(std::log(a.s) + double(a.shift))); }
};

template <typename T, NormKind K>
void run_norm(const ReduceLoops& plan, const TensorBase& self, const TensorBase& out, double p, int64_t count) {
  using Out = real_t<T>;
  NormReducer<T, Out, K> red{static_cast<Out*>(out.data_ptr()), p, count};
  run_reduce(plan, static_cast<const T*>(self.data_ptr()), red);
}

}  // namespace

void var(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self,
         const std::optional<Scalar>& correction) {
  const double c = correction ? correction->to_double() : 1.0;
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_inexact(dtype_of<T>)) {
      KILN_FAIL(DTypeError, "var", "self", "expected a floating point or complex tensor, got ", dtype_name(self.dtype()));
    } else {
      using Out = real_t<T>;
      VarianceReducer<T, Out> red{static_cast<Out*>(out.data_ptr()), c};
      run_reduce(loops, static_cast<const T*>(self.data_ptr()), red);
    }
  });
}

void norm(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self, const std::optional<Scalar>& p) {
  const double pv = meta::norm_order("norm", p);
  ReduceLoops loops = make_reduce_loops(self, plan);
  const int64_t count = plan.reduced_numel;
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_inexact(dtype_of<T>)) {
      KILN_FAIL(DTypeError, "norm", "self", "expected a floating point or complex tensor, got ", dtype_name(self.dtype()));
    } else if (pv == 2.0) {
      run_norm<T, NormKind::Two>(loops, self, out, pv, count);
    } else if (pv == 1.0) {
      run_norm<T, NormKind::One>(loops, self, out, pv, count);
    } else if (pv == 0.0) {
      run_norm<T, NormKind::Zero>(loops, self, out, pv, count);
    } else if (std::isinf(pv)) {
      if (pv > 0) run_norm<T, NormKind::Inf>(loops, self, out, pv, count);
      else run_norm<T, NormKind::NegInf>(loops, self, out, pv, count);
    } else {
      run_norm<T, NormKind::General>(loops, self, out, pv, count);
    }
  });
}

void logsumexp(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_floating(dtype_of<T>)) {
      KILN_FAIL(DTypeError, "logsumexp", "self", "expected a floating point tensor, got ", dtype_name(self.dtype()));
    } else {
      using C = opmath_t<T>;
      const T* src = static_cast<const T*>(self.data_ptr());
      std::vector<C> maxes(size_t(loops.out_numel));
      MinMaxReducer<T, true, C> max_red{maxes.data()};
      run_reduce(loops, src, max_red);
      ExpSumReducer<T> exp_red{static_cast<T*>(out.data_ptr()), maxes.data()};
      run_reduce(loops, src, exp_red);
    }
  });
}

}  // namespace kiln::cpu
