#ifndef KILN_KERNELS_INCLUDE_KILN_KERNEL_CONV_SHAPE_H_
#define KILN_KERNELS_INCLUDE_KILN_KERNEL_CONV_SHAPE_H_
// The im2col shape (kiln/common/im2col.h) of one sample's image under a convolution plan, and the
// per-group matrix sizes the CPU and CUDA convolution kernels multiply.
#include "kiln/common/im2col.h"
#include "kiln/meta/convolution.h"

namespace kiln::im2col {

inline Shape shape_of(const meta::ConvPlan& p) {
  Shape s;
  s.channels = p.image_channels;
  const int64_t skip = 3 - p.dims;  // leading dims of size 1
  for (int64_t d = 0; d < p.dims; ++d) {
    s.image[skip + d] = p.image_sizes[size_t(d)];
    s.cols[skip + d] = p.small_sizes[size_t(d)];
    s.kernel[skip + d] = p.kernel[size_t(d)];
    s.stride[skip + d] = p.stride[size_t(d)];
    s.padding[skip + d] = p.padding[size_t(d)];
    s.dilation[skip + d] = p.dilation[size_t(d)];
  }
  return s;
}

// The per-group matrices of a plan: W_g is [Ms, Kg], a sample's small side [Ms, L] per group and
// its im2col matrix [Kg, L] per group; col_rows = G * Kg rows of a sample's whole im2col matrix.
struct GroupDims {
  int64_t G, Ms, Kg, L, col_rows, small_sample, image_sample;
  explicit GroupDims(const meta::ConvPlan& p)
      : G(p.groups),
        Ms(p.small_channels / p.groups),
        Kg(p.image_channels / p.groups * p.kernel_numel()),
        L(p.small_numel()),
        col_rows(p.image_channels * p.kernel_numel()),
        small_sample(p.small_channels * p.small_numel()),
        image_sample(p.image_channels * p.image_numel()) {}
};

}  // namespace kiln::im2col
#endif  // KILN_KERNELS_INCLUDE_KILN_KERNEL_CONV_SHAPE_H_
