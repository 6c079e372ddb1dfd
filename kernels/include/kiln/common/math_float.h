#ifndef KILN_KERNELS_COMMON_MATH_FLOAT_H_
#define KILN_KERNELS_COMMON_MATH_FLOAT_H_
// Elementary functions of float and double (the compute types of every int_to_float op):
// the C library's, exactly as PyTorch's scalar CPU loops call them.
#include "math_base.h"
#include "math_simd.h"

namespace kiln::math {

#define KILN_REAL_UNARY(name, expr)                                  \
  template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0> \
  KILN_HOST_DEVICE inline T name(T x) { return expr; }
KILN_REAL_UNARY(exp, std::exp(x))
KILN_REAL_UNARY(exp2, std::exp2(x))
KILN_REAL_UNARY(expm1, std::expm1(x))
KILN_REAL_UNARY(log, std::log(x))
KILN_REAL_UNARY(log2, std::log2(x))
KILN_REAL_UNARY(log10, std::log10(x))
KILN_REAL_UNARY(log1p, std::log1p(x))
KILN_REAL_UNARY(sqrt, std::sqrt(x))
KILN_REAL_UNARY(rsqrt, T(1) / std::sqrt(x))
KILN_REAL_UNARY(reciprocal, T(1) / x)
KILN_REAL_UNARY(sin, std::sin(x))
KILN_REAL_UNARY(cos, std::cos(x))
KILN_REAL_UNARY(tan, std::tan(x))
KILN_REAL_UNARY(asin, std::asin(x))
KILN_REAL_UNARY(acos, std::acos(x))
KILN_REAL_UNARY(atan, std::atan(x))
KILN_REAL_UNARY(sinh, std::sinh(x))
KILN_REAL_UNARY(cosh, std::cosh(x))
KILN_REAL_UNARY(tanh, std::tanh(x))
KILN_REAL_UNARY(asinh, std::asinh(x))
KILN_REAL_UNARY(acosh, std::acosh(x))
KILN_REAL_UNARY(atanh, std::atanh(x))
KILN_REAL_UNARY(erf, std::erf(x))
KILN_REAL_UNARY(erfc, std::erfc(x))
#undef KILN_REAL_UNARY

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T atan2(T y, T x) { return std::atan2(y, x); }
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T hypot(T x, T y) { return std::hypot(x, y); }

// Classification; integers and bool are always finite.
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline bool isnan(T x) {
  if constexpr (is_floating_v<T>) return std::isnan(x);
  else return false;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline bool isinf(T x) {
  if constexpr (is_floating_v<T>) return std::isinf(x);
  else return false;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline bool isfinite(T x) {
  if constexpr (is_floating_v<T>) return std::isfinite(x);
  else return true;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline bool truthy(T x) { return x != T(0); }

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_FLOAT_H_
