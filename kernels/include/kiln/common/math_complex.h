#ifndef KILN_KERNELS_COMMON_MATH_COMPLEX_H_
#define KILN_KERNELS_COMMON_MATH_COMPLEX_H_
// Elementary functions of kiln::complex. On the host they forward to std::complex (the
// C library's cexp, clog, ... exactly as PyTorch's CPU kernels do); device code uses the
// real-math formulas in detail::, which the host tests check against std::complex.
#include <complex>
#include "math_base.h"

namespace kiln::math {
namespace detail {

template <typename T>
inline std::complex<T> to_std(complex<T> z) { return std::complex<T>(z.re, z.im); }
template <typename T>
inline complex<T> from_std(std::complex<T> z) { return complex<T>(z.real(), z.imag()); }

template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_exp(complex<T> z) {
  if (z.im == T(0)) return {std::exp(z.re), z.im};  // stay exact on the real axis
  T e = std::exp(z.re);
  return {e * std::cos(z.im), e * std::sin(z.im)};
}

template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_log(complex<T> z) {
  T ax = std::abs(z.re), ay = std::abs(z.im);
  T hi = ax > ay ? ax : ay, lo = ax > ay ? ay : ax;
  T re;
  // near |z| = 1, log(|z|) cancels: log1p of (|z|^2 - 1) computed as (hi-1)(hi+1) + lo^2
  if (hi > T(0.5) && hi < T(2) && lo < T(0.5)) re = T(0.5) * std::log1p((hi - T(1)) * (hi + T(1)) + lo * lo);
  else re = std::log(std::hypot(z.re, z.im));
  return {re, std::atan2(z.im, z.re)};
}

template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_sqrt(complex<T> z) {
  if (z.re == T(0) && z.im == T(0)) return {T(0), z.im};
  if (std::isinf(z.im)) return {std::abs(z.im), z.im};
  // halves first so |x| + |z| cannot overflow
  T t = std::sqrt(std::abs(z.re) * T(0.5) + std::hypot(z.re * T(0.5), z.im * T(0.5)));
  if (z.re >= T(0)) return {t, z.im / (T(2) * t)};
  return {std::abs(z.im) / (T(2) * t), std::copysign(t, z.im)};
}

template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_sinh(complex<T> z) {
  return {std::sinh(z.re) * std::cos(z.im), std::cosh(z.re) * std::sin(z.im)};
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_cosh(complex<T> z) {
  return {std::cosh(z.re) * std::cos(z.im), std::sinh(z.re) * std::sin(z.im)};
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_tanh(complex<T> z) {
  if (std::abs(z.re) > T(22)) {  // tanh(re) is +-1 to working precision; sinh would overflow
    T e = std::exp(-std::abs(z.re));
    return {std::copysign(T(1), z.re), T(4) * std::sin(z.im) * std::cos(z.im) * e * e};
  }
  // Kahan's formula: no cancellation and no overflow of cosh^2
  T t = std::tan(z.im), b = T(1) + t * t, s = std::sinh(z.re);
  T rho = std::sqrt(T(1) + s * s), d = T(1) + b * s * s;
  return {b * rho * s / d, t / d};
}
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz).
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_sin(complex<T> z) {
  complex<T> w = complex_sinh(complex<T>(-z.im, z.re));
  return {w.im, -w.re};
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_cos(complex<T> z) {
  return complex_cosh(complex<T>(-z.im, z.re));
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_tan(complex<T> z) {
  complex<T> w = complex_tanh(complex<T>(-z.im, z.re));
  return {w.im, -w.re};
}
// The C library's cpow is exp(b * log(a)) too (so 0^0 is NaN, as in PyTorch).
template <typename T>
KILN_HOST_DEVICE inline complex<T> complex_pow(complex<T> a, complex<T> b) {
  return complex_exp(b * complex_log(a));
}

}  // namespace detail

#if defined(__CUDA_ARCH__)
#define KILN_COMPLEX_UNARY(name) \
  template <typename T>          \
  KILN_HOST_DEVICE inline complex<T> name(complex<T> z) { return detail::complex_##name(z); }
#else
#define KILN_COMPLEX_UNARY(name) \
  template <typename T>          \
  KILN_HOST_DEVICE inline complex<T> name(complex<T> z) { return detail::from_std(std::name(detail::to_std(z))); }
#endif
KILN_COMPLEX_UNARY(exp)
KILN_COMPLEX_UNARY(log)
KILN_COMPLEX_UNARY(sqrt)
KILN_COMPLEX_UNARY(sin)
KILN_COMPLEX_UNARY(cos)
KILN_COMPLEX_UNARY(tan)
KILN_COMPLEX_UNARY(sinh)
KILN_COMPLEX_UNARY(cosh)
KILN_COMPLEX_UNARY(tanh)
#undef KILN_COMPLEX_UNARY

template <typename T>
KILN_HOST_DEVICE inline complex<T> pow(complex<T> a, complex<T> b) {
#if defined(__CUDA_ARCH__)
  return detail::complex_pow(a, b);
#else
  return detail::from_std(std::pow(detail::to_std(a), detail::to_std(b)));
#endif
}

// Magnitude: a real result (abs of complex is complex_to_real).
template <typename T>
KILN_HOST_DEVICE inline T abs(complex<T> z) { return std::hypot(z.re, z.im); }

template <typename T>
KILN_HOST_DEVICE inline complex<T> reciprocal(complex<T> z) { return complex<T>(T(1)) / z; }

template <typename T>
KILN_HOST_DEVICE inline bool isnan(complex<T> z) { return std::isnan(z.re) || std::isnan(z.im); }
template <typename T>
KILN_HOST_DEVICE inline bool isinf(complex<T> z) { return std::isinf(z.re) || std::isinf(z.im); }
template <typename T>
KILN_HOST_DEVICE inline bool isfinite(complex<T> z) { return std::isfinite(z.re) && std::isfinite(z.im); }
template <typename T>
KILN_HOST_DEVICE inline bool truthy(complex<T> z) { return z.re != T(0) || z.im != T(0); }

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_COMPLEX_H_
