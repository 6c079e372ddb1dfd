#ifndef KILN_KERNELS_COMMON_MATH_INTEGER_H_
#define KILN_KERNELS_COMMON_MATH_INTEGER_H_
// pow and the division family. Integer kernels cannot raise: on the CPU the ops check their
// divisor before the kernel runs and raise as PyTorch does (registry key `integer_divisor`); on
// CUDA, which is not checked, division or remainder by zero gives 0 here. The one overflowing
// quotient, INT_MIN / -1 (a hardware trap on x86), wraps to INT_MIN.
#include "math_base.h"

namespace kiln::math {
namespace detail {
// -x with two's-complement wrap-around and no signed-overflow UB.
template <typename T>
KILN_HOST_DEVICE inline T wrapping_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return T(U(U(0) - U(x)));
}
}  // namespace detail

// Integer pow by squaring with wrap-around; negative exponents as PyTorch: 1 for base 1,
// +-1 for base -1 by parity, else 0. (Multiplying in uint64 keeps the low bits exact.)
template <typename T, std::enable_if_t<is_int_v<T>, int> = 0>
KILN_HOST_DEVICE inline T pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < T(0)) {
      if (base == T(1)) return T(1);
      if (base == T(-1)) return (exponent & T(1)) ? T(-1) : T(1);
      return T(0);
    }
  }
  uint64_t result = 1, b = uint64_t(base), e = uint64_t(exponent);
  while (e) {
    if (e & 1u) result *= b;
    e >>= 1;
    b *= b;
  }
  return T(result);
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T pow(T base, T exponent) { return std::pow(base, exponent); }

// Quotient rounded toward zero (div with rounding_mode='trunc').
template <typename T, std::enable_if_t<!is_complex_v<T> && !is_bool_v<T>, int> = 0>
KILN_HOST_DEVICE inline T div_trunc(T a, T b) {
  if constexpr (is_floating_v<T>) {
    return std::trunc(a / b);
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return detail::wrapping_neg(a);
    }
    return T(a / b);
  }
}

// Quotient rounded toward -inf (floor_divide, Python's //).
template <typename T, std::enable_if_t<!is_complex_v<T> && !is_bool_v<T>, int> = 0>
KILN_HOST_DEVICE inline T div_floor(T a, T b) {
  if constexpr (is_floating_v<T>) {
    // Python's float floor division: exact for representable quotients, -0.0 kept.
    if (b == T(0)) return a / b;  // IEEE: +-inf or NaN
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div == T(0)) return std::copysign(T(0), a / b);
    T floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
    return floordiv;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return detail::wrapping_neg(a);
      T q = T(a / b), r = T(a % b);
      return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(q - T(1)) : q;
    } else {
      return T(a / b);
    }
  }
}

// Remainder with the divisor's sign (torch.remainder, Python's %).
template <typename T, std::enable_if_t<!is_complex_v<T> && !is_bool_v<T>, int> = 0>
KILN_HOST_DEVICE inline T python_mod(T a, T b) {
  if constexpr (is_floating_v<T>) {
    T m = std::fmod(a, b);
    if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
    return m;
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      T r = T(a % b);
      return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
    } else {
      return T(a % b);
    }
  }
}

// Remainder with the dividend's sign (torch.fmod, C's fmod and %).
template <typename T, std::enable_if_t<!is_complex_v<T> && !is_bool_v<T>, int> = 0>
KILN_HOST_DEVICE inline T fmod(T a, T b) {
  if constexpr (is_floating_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
    }
    return T(a % b);
  }
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_INTEGER_H_
