#ifndef KILN_KERNELS_COMMON_MATH_BITWISE_H_
#define KILN_KERNELS_COMMON_MATH_BITWISE_H_
// Bitwise ops (logical on bool) and shifts with PyTorch's defined out-of-range behaviour:
// a shift amount that is negative or >= the bit width gives 0 for <<, and for >> the sign
// fill (0 or -1; 0 for unsigned). C leaves both undefined.
#include "math_base.h"

namespace kiln::math {

template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
KILN_HOST_DEVICE inline T bitwise_not(T x) {
  if constexpr (is_bool_v<T>) return !x;
  else return T(~x);
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
KILN_HOST_DEVICE inline T bitwise_and(T a, T b) {
  if constexpr (is_bool_v<T>) return a && b;
  else return T(a & b);
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
KILN_HOST_DEVICE inline T bitwise_or(T a, T b) {
  if constexpr (is_bool_v<T>) return a || b;
  else return T(a | b);
}
template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
KILN_HOST_DEVICE inline T bitwise_xor(T a, T b) {
  if constexpr (is_bool_v<T>) return a != b;
  else return T(a ^ b);
}

template <typename T, std::enable_if_t<is_int_v<T>, int> = 0>
KILN_HOST_DEVICE inline T shift_left(T a, T b) {
  using S = std::make_signed_t<T>;
  using U = std::make_unsigned_t<T>;
  constexpr S bits = S(sizeof(T) * 8);
  if (S(b) < S(0) || S(b) >= bits) return T(0);
  return T(U(a) << S(b));  // unsigned: no UB when bits reach the sign
}
template <typename T, std::enable_if_t<is_int_v<T>, int> = 0>
KILN_HOST_DEVICE inline T shift_right(T a, T b) {
  using S = std::make_signed_t<T>;
  constexpr S bits = S(sizeof(T) * 8);
  if (S(b) < S(0) || S(b) >= bits) {
    if constexpr (std::is_signed_v<T>) return a < T(0) ? T(-1) : T(0);
    else return T(0);
  }
  return T(a >> S(b));
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_BITWISE_H_
