#ifndef KILN_KERNELS_COMMON_MATH_LERP_H_
#define KILN_KERNELS_COMMON_MATH_LERP_H_
// lerp with PyTorch's two-sided formula: exact at both ends (w = 0 gives a, w = 1 gives b).
// PyTorch 1.13 tests `w < 0.5` for real weights and |w| < 0.5 for complex ones.
#include "math_complex.h"

namespace kiln::math {

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}
template <typename T>
KILN_HOST_DEVICE inline complex<T> lerp(complex<T> a, complex<T> b, complex<T> w) {
  return abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (complex<T>(T(1)) - w);
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_LERP_H_
