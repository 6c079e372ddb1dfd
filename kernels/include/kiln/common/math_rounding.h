#ifndef KILN_KERNELS_COMMON_MATH_ROUNDING_H_
#define KILN_KERNELS_COMMON_MATH_ROUNDING_H_
// abs, sign and rounding for every real compute type (integers round to themselves).
#include "math_base.h"

namespace kiln::math {

// Integers wrap like PyTorch: abs(int8 -128) is -128 (computed unsigned: no overflow UB).
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T abs(T x) {
  if constexpr (is_floating_v<T>) {
    return std::abs(x);
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return x < T(0) ? T(U(U(0) - U(x))) : x;
  } else {
    return x;
  }
}

// -1, 0 or 1; like PyTorch, sign(-0.0) and sign(NaN) are +0.0; bool is itself.
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T sign(T x) {
  if constexpr (is_bool_v<T> || std::is_unsigned_v<T>) return T(x != T(0));
  else return T(int(T(0) < x) - int(x < T(0)));
}

template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T floor(T x) {
  if constexpr (is_floating_v<T>) return std::floor(x);
  else return x;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T ceil(T x) {
  if constexpr (is_floating_v<T>) return std::ceil(x);
  else return x;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T trunc(T x) {
  if constexpr (is_floating_v<T>) return std::trunc(x);
  else return x;
}
// torch.round: halves go to the even neighbour (nearbyint in the default rounding mode).
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T round_half_even(T x) {
  if constexpr (is_floating_v<T>) return std::nearbyint(x);
  else return x;
}

// torch.round(x, decimals=d): half to even at 10^-d, as PyTorch computes it (the power of ten
// in T's precision; a negative d divides first so that 10^-d stays exact).
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T round_decimals(T x, int64_t decimals) {
  const bool negative = decimals < 0;
  const T ten_pow = T(std::pow(T(10), T(negative ? -decimals : decimals)));
  return negative ? T(std::nearbyint(x / ten_pow)) * ten_pow : T(std::nearbyint(x * ten_pow)) / ten_pow;
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_ROUNDING_H_
