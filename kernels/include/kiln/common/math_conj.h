#ifndef KILN_KERNELS_COMMON_MATH_CONJ_H_
#define KILN_KERNELS_COMMON_MATH_CONJ_H_
// conj, sgn and angle, with PyTorch's meaning on real numbers too: conj is the identity, sgn is
// sign, and angle is pi for negative numbers, 0 otherwise (NaN stays NaN).
#include "math_complex.h"
#include "math_rounding.h"

namespace kiln::math {
template <typename T>
KILN_HOST_DEVICE inline complex<T> conj(complex<T> z) {
  return complex<T>(z.re, -z.im);
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T conj(T x) {
  return x;
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> sgn(complex<T> z) {
  const T a = abs(z);
  return a == T(0) ? complex<T>(T(0)) : complex<T>(z.re / a, z.im / a);
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T sgn(T x) {
  return sign(x);
}
template <typename T>
KILN_HOST_DEVICE inline T angle(complex<T> z) {
  return std::atan2(z.im, z.re);
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T angle(T x) {
  if (x != x) return x;  // NaN
  return x < T(0) ? T(3.14159265358979323846) : T(0);
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_CONJ_H_
