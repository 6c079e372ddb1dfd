#ifndef KILN_COMMON_CONVERT_H_
#define KILN_COMMON_CONVERT_H_
// The one element conversion of every layer (copy_, fill_, kernels; host and device), with
// PyTorch's cast semantics (c10::static_cast_with_inter_type): complex -> real keeps the real
// part (also for bool: 0-1j -> false, as torch), anything -> bool is "!= 0", and floating ->
// narrow integer goes through int64 so -1.0 -> uint8 is 255 as on x86 PyTorch.
#include <cstdint>
#include <type_traits>
#include "kiln/dtype.h"

namespace kiln::detail {

// Floating -> integer without undefined behaviour, as x86 PyTorch computes it: truncation via
// int64; NaN, infinities and values outside int64 give INT64_MIN, which narrower types wrap.
template <typename To, typename F>
KILN_HOST_DEVICE inline To float_to_int(F v) {
  const double d = double(v);
  const int64_t i = (d >= -9223372036854775808.0 && d < 9223372036854775808.0) ? int64_t(d) : INT64_MIN;
  return To(i);
}

template <typename To, typename From>
KILN_HOST_DEVICE KILN_INLINE To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_complex_v<From>) return v.re != 0;
    else return static_cast<opmath_t<From>>(v) != 0;
  } else if constexpr (is_complex_v<To>) {
    using V = typename To::value_type;
    if constexpr (is_complex_v<From>) return To(V(v.re), V(v.im));
    else return To(V(static_cast<opmath_t<From>>(v)), V(0));
  } else {
    auto r = [&] {
      if constexpr (is_complex_v<From>) return v.re;
      else return static_cast<opmath_t<From>>(v);
    }();
    using R = decltype(r);
    if constexpr (std::is_integral_v<To> && std::is_floating_point_v<R>)
      return float_to_int<To>(r);  // NaN, inf and out-of-range values are defined too
    else
      return To(r);
  }
}

}  // namespace kiln::detail
#endif  // KILN_COMMON_CONVERT_H_
