#ifndef KILN_KERNELS_INCLUDE_KILN_COMMON_IM2COL_H_
#define KILN_KERNELS_INCLUDE_KILN_COMMON_IM2COL_H_
// The im2col layout shared by the CPU and CUDA convolution kernels. One sample's image of
// C channels and spatial sizes `image` becomes a [C * K, L] matrix: row c * K + k holds, for
// each window l of the window grid (`cols`, L = its numel), the image element under kernel tap
// k, or 0 where the tap lands in the padding. Spatial dims are padded to three (size 1, kernel
// 1, stride 1, no padding), so 1-d, 2-d and 3-d share one code path.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::im2col {

struct Shape {
  int64_t channels = 0;
  int64_t image[3] = {1, 1, 1}, cols[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};

  KILN_HOST_DEVICE int64_t image_numel() const { return image[0] * image[1] * image[2]; }
  KILN_HOST_DEVICE int64_t col_numel() const { return cols[0] * cols[1] * cols[2]; }
  KILN_HOST_DEVICE int64_t kernel_numel() const { return kernel[0] * kernel[1] * kernel[2]; }
  KILN_HOST_DEVICE int64_t rows() const { return channels * kernel_numel(); }
  // The im2col matrix is the image itself ([C, L], nothing to copy): 1x1 kernels, stride 1, no padding.
  KILN_HOST_DEVICE bool is_identity() const {
    for (int d = 0; d < 3; ++d)
      if (kernel[d] != 1 || stride[d] != 1 || padding[d] != 0) return false;
    return true;
  }
};

// The offset within its channel of the image element under tap `k` of window `l`, or -1 (padding).
KILN_HOST_DEVICE inline int64_t source(const Shape& s, int64_t k, int64_t l) {
  int64_t kk[3], ll[3];
  kk[2] = k % s.kernel[2], k /= s.kernel[2];
  kk[1] = k % s.kernel[1], kk[0] = k / s.kernel[1];
  ll[2] = l % s.cols[2], l /= s.cols[2];
  ll[1] = l % s.cols[1], ll[0] = l / s.cols[1];
  int64_t offset = 0;
  for (int d = 0; d < 3; ++d) {
    const int64_t i = ll[d] * s.stride[d] - s.padding[d] + kk[d] * s.dilation[d];
    if (i < 0 || i >= s.image[d]) return -1;
    offset = offset * s.image[d] + i;
  }
  return offset;
}

// col2im as a gather: the sum, over the taps that read image element `pos` of a channel, of the
// (tap, window) entries of the im2col matrix `col` (that channel's K rows), in tap order.
template <typename Acc, typename T>
KILN_HOST_DEVICE Acc gather_image(const Shape& s, const T* col, int64_t pos) {
  int64_t p[3];
  p[2] = pos % s.image[2], pos /= s.image[2];
  p[1] = pos % s.image[1], p[0] = pos / s.image[1];
  const int64_t L = s.col_numel();
  Acc acc = Acc(0);
  for (int64_t k0 = 0; k0 < s.kernel[0]; ++k0) {
    const int64_t o0 = p[0] + s.padding[0] - k0 * s.dilation[0];
    if (o0 < 0 || o0 % s.stride[0] != 0 || o0 / s.stride[0] >= s.cols[0]) continue;
    for (int64_t k1 = 0; k1 < s.kernel[1]; ++k1) {
      const int64_t o1 = p[1] + s.padding[1] - k1 * s.dilation[1];
      if (o1 < 0 || o1 % s.stride[1] != 0 || o1 / s.stride[1] >= s.cols[1]) continue;
      for (int64_t k2 = 0; k2 < s.kernel[2]; ++k2) {
        const int64_t o2 = p[2] + s.padding[2] - k2 * s.dilation[2];
        if (o2 < 0 || o2 % s.stride[2] != 0 || o2 / s.stride[2] >= s.cols[2]) continue;
        const int64_t k = (k0 * s.kernel[1] + k1) * s.kernel[2] + k2;
        const int64_t l = ((o0 / s.stride[0]) * s.cols[1] + o1 / s.stride[1]) * s.cols[2] + o2 / s.stride[2];
        acc += Acc(col[k * L + l]);
      }
    }
  }
  return acc;
}

}  // namespace kiln::im2col
#endif  // KILN_KERNELS_INCLUDE_KILN_COMMON_IM2COL_H_
