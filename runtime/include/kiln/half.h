#ifndef KILN_RUNTIME_INCLUDE_KILN_HALF_H_
#define KILN_RUNTIME_INCLUDE_KILN_HALF_H_
// 16-bit floating types stored as bits, computed in float (host and device).
#include <cstdint>
#include <cstring>
#include "kiln/macros.h"

namespace kiln {
namespace detail {
KILN_HOST_DEVICE inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
KILN_HOST_DEVICE inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// IEEE binary16 <-> binary32 with round-to-nearest-even, NaN and Inf preserved.
KILN_HOST_DEVICE inline uint16_t float_to_half_bits(float f) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return uint16_t(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to infinity
  if (absx < 0x38800000u) {                                  // subnormal half or zero
    // add 0.5 (as float) to shift mantissa into place; float addition does the rounding
    float v = bits_float(absx) + 0.5f;
    return uint16_t(sign | (float_bits(v) - 0x3f000000u));
  }
  uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  return uint16_t(sign | (absx >> 13));
}
KILN_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float v = float(mant) * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}
KILN_HOST_DEVICE inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);                                         // round to nearest even
  return uint16_t(x >> 16);
}
}  // namespace detail

struct Half {
  uint16_t bits = 0;
  Half() = default;
  struct from_bits_t {};
  KILN_HOST_DEVICE constexpr Half(uint16_t b, from_bits_t) : bits(b) {}
  KILN_HOST_DEVICE Half(float f) : bits(detail::float_to_half_bits(f)) {}
  KILN_HOST_DEVICE Half(double d) : Half(float(d)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  KILN_HOST_DEVICE Half(I i) : Half(float(i)) {}
  KILN_HOST_DEVICE operator float() const { return detail::half_bits_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  struct from_bits_t {};
  KILN_HOST_DEVICE constexpr BFloat16(uint16_t b, from_bits_t) : bits(b) {}
  KILN_HOST_DEVICE BFloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  KILN_HOST_DEVICE BFloat16(double d) : BFloat16(float(d)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  KILN_HOST_DEVICE BFloat16(I i) : BFloat16(float(i)) {}
  KILN_HOST_DEVICE operator float() const { return detail::bits_float(uint32_t(bits) << 16); }
};

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_HALF_H_
