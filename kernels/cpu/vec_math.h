#ifndef KILN_KERNELS_CPU_VEC_MATH_H_
#define KILN_KERNELS_CPU_VEC_MATH_H_
// exp for float that the compiler can vectorize inside `omp simd` loops.
// glibc only offers vector expf under -ffast-math, and a scalar expf call per element made
// softmax several times slower than PyTorch's SLEEF path. Cephes-style: n = round(x / ln 2)
// by the 1.5 * 2^23 trick (no float->int conversion), r = x - n ln 2 in two parts, a degree-6
// polynomial, and 2^n built in the exponent bits as two factors so subnormal results stay
// accurate. Error below 1 ulp (checked against double exp); exp(-inf) = 0, exp(+inf) = inf,
// NaN propagates. Free of conditional constants so GCC's if-conversion (with trapping math)
// accepts it and the loop vectorizes.
#include <cmath>
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::cpu {

KILN_INLINE float select_bits(bool c, float a, float b) {
  uint32_t m = 0u - uint32_t(c);
  return __builtin_bit_cast(float, (__builtin_bit_cast(uint32_t, a) & m) | (__builtin_bit_cast(uint32_t, b) & ~m));
}

KILN_INLINE float vec_exp(float x) {
  // Clamping to [lo, hi] keeps 2^n finite-exponent arithmetic valid while the final scaling still
  // overflows to inf (exp(89) > FLT_MAX) or underflows to 0 (exp(-110) < 2^-150) by itself.
  const float hi = 89.0f;
  const float lo = -110.0f;
  const float shifter = 12582912.0f;      // 1.5 * 2^23: adding it rounds to an integer
  // Selects by bit masks, not ?: -- GCC otherwise threads the clamped path into constant
  // products that "could trap" and gives up vectorizing. NaN maps to hi and is restored below.
  float xc = select_bits(x < hi, x, hi);
  xc = select_bits(xc > lo, xc, lo);
  float t = xc * 1.44269504088896341f + shifter;
  float fn = t - shifter;                                          // round(x / ln 2)
  int32_t n = int32_t(__builtin_bit_cast(uint32_t, t) - __builtin_bit_cast(uint32_t, shifter));
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t n1 = n >> 1, n2 = n - n1;  // 2^n = 2^n1 * 2^n2, each normal for n in [-159, 129]
  // Below -104 the result rounds to 0: the second factor is then 0 itself, so no product
  // underflows. An underflowing product takes a slow microcode path on x86 (3x the time per
  // element), and -inf is what masked scores are (attention, masked softmax).
  y = y * __builtin_bit_cast(float, uint32_t(n1 + 127) << 23);
  y = y * select_bits(x > -104.0f, __builtin_bit_cast(float, uint32_t(n2 + 127) << 23), 0.0f);
  return select_bits(x == x, y, x);
}

// exp in compute precision: vec_exp for float, the C library's for double.
KILN_INLINE float exp_c(float x) { return vec_exp(x); }
KILN_INLINE double exp_c(double x) { return std::exp(x); }

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_VEC_MATH_H_
