#ifndef KILN_KERNELS_COMMON_MATH_COMPARE_H_
#define KILN_KERNELS_COMMON_MATH_COMPARE_H_
// Order-based selections: maximum, minimum, clamp, nan_to_num. Ties keep the first
// argument (std::max / std::min, as PyTorch's scalar loops); a NaN input propagates.
#include "math_base.h"

namespace kiln::math {

template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T maximum(T a, T b) {
  if constexpr (is_floating_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? b : a;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T minimum(T a, T b) {
  if constexpr (is_floating_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return b < a ? b : a;
}

// min(max(x, lo), hi) as torch.clamp with Scalar bounds: a NaN x stays NaN, a NaN bound is
// ignored, and lo > hi gives hi.
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T clamp(T x, T lo, T hi) {
  if constexpr (is_floating_v<T>) {
    if (std::isnan(x)) return x;
  }
  T m = x < lo ? lo : x;
  return hi < m ? hi : m;
}
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T clamp(T x, Opt<T> lo, Opt<T> hi) {
  if constexpr (is_floating_v<T>) {
    if (std::isnan(x)) return x;
  }
  if (lo.has && x < lo.value) x = lo.value;
  if (hi.has && hi.value < x) x = hi.value;
  return x;
}

// Defaults are T's limits. For float16/bfloat16 (computed as float) the caller must pass the
// storage type's limits explicitly, since T = float cannot know them.
template <typename T, std::enable_if_t<!is_complex_v<T>, int> = 0>
KILN_HOST_DEVICE inline T nan_to_num(T x, Opt<T> nan, Opt<T> posinf, Opt<T> neginf) {
  if constexpr (is_floating_v<T>) {
    if (std::isnan(x)) return nan.has ? nan.value : T(0);
    if (x == FloatLimits<T>::inf) return posinf.has ? posinf.value : FloatLimits<T>::max;
    if (x == -FloatLimits<T>::inf) return neginf.has ? neginf.value : FloatLimits<T>::lowest;
  }
  return x;
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_COMPARE_H_
