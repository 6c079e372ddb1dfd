#ifndef KILN_KERNELS_COMMON_MATH_BASE_H_
#define KILN_KERNELS_COMMON_MATH_BASE_H_
// Shared pieces of kiln::math: the optional-scalar type functors receive, type traits and
// floating-point limits spelled without std::numeric_limits (device code needs no
// --expt-relaxed-constexpr then).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include "kiln/complex.h"
#include "kiln/macros.h"

namespace kiln::math {

// A `Scalar?` / `float?` argument: `has` is false when the caller passed None.
template <typename T>
struct Opt {
  T value;
  bool has;
};

template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
// uint8 ... int64 (not bool).
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
using kiln::is_complex_v;

// Real type of a compute type: complex<float> -> float, others unchanged.
template <typename T> struct RealOf { using type = T; };
template <typename T> struct RealOf<complex<T>> { using type = T; };
template <typename T> using real_t = typename RealOf<T>::type;

template <typename T> struct FloatLimits;
template <> struct FloatLimits<float> {
  static constexpr float max = FLT_MAX, lowest = -FLT_MAX, inf = __builtin_huge_valf();
};
template <> struct FloatLimits<double> {
  static constexpr double max = DBL_MAX, lowest = -DBL_MAX, inf = __builtin_huge_val();
};

template <typename T>
KILN_HOST_DEVICE inline T quiet_nan() {
  return T(__builtin_nanf(""));
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_BASE_H_
