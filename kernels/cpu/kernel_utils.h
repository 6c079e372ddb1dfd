#ifndef KILN_KERNELS_CPU_KERNEL_UTILS_H_
#define KILN_KERNELS_CPU_KERNEL_UTILS_H_
// Small helpers shared by the hand-written CPU kernels: element types, NaN and nonzero tests,
// optional operands (kiln/kernel/optional_operand.h), a run's mean and rstd.
#include <cmath>
#include <type_traits>
#include "kiln/common/convert.h"
#include "kiln/kernel/optional_operand.h"
#include "kiln/tensor_base.h"

namespace kiln::cpu {

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_float_like_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// Element type of to_real(dtype): complex<V> -> V, others unchanged.
template <typename T> struct RealOf { using type = T; };
template <typename V> struct RealOf<complex<V>> { using type = V; };
template <typename T> using real_t = typename RealOf<T>::type;

template <typename T>
KILN_INLINE bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else if constexpr (is_reduced_float_v<T>) return float(x) != float(x);
  else return false;
}

// One cast routine for every layer (kiln/common/convert.h): PyTorch's rules, float -> integer
// defined for NaN, infinities and out-of-range values.
using ::kiln::detail::convert;
using ::kiln::detail::ptr_or_null;

// Nonzero test used by all/any/count_nonzero (NaN is nonzero).
template <typename T>
KILN_INLINE bool truthy(T x) {
  if constexpr (is_complex_v<T>) return x.re != 0 || x.im != 0;
  else if constexpr (is_reduced_float_v<T>) return float(x) != 0.0f;
  else return x != T(0);
}

// |x| as a real number in the compute precision of T (double for float32 accumulation safety).
template <typename T>
KILN_INLINE double abs_as_double(T x) {
  if constexpr (is_complex_v<T>) return std::hypot(double(x.re), double(x.im));
  else return std::fabs(double(static_cast<opmath_t<T>>(x)));
}

// The mean and 1 / sqrt(biased variance + eps) of n contiguous values, in compute type C, by two
// passes (exact for runs whose mean is large against their spread, unlike E[x^2] - E[x]^2). An
// empty run: mean 0 and rstd NaN (0 / 0), as PyTorch's normalizations give.
template <typename C, typename T>
KILN_INLINE void mean_and_rstd(const T* x, int64_t n, C eps, C* mean, C* rstd) {
  C s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += C(x[i]);
  const C mu = n > 0 ? s / C(n) : C(0);
  C q = 0;
#pragma omp simd reduction(+ : q)
  for (int64_t i = 0; i < n; ++i) {
    const C d = C(x[i]) - mu;
    q += d * d;
  }
  *mean = mu;
  *rstd = C(1) / std::sqrt(q / C(n) + eps);
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_KERNEL_UTILS_H_
