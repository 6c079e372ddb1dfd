#ifndef KILN_KERNELS_CPU_ONEDNN_CONV_H_
#define KILN_KERNELS_CPU_ONEDNN_CONV_H_
// float32 convolutions through oneDNN (Debian's libdnnl, what libtorch runs on the CPU), in the
// terms of kiln/meta/convolution.h: every case is a plain oneDNN convolution with src = the
// image, dst = the small side and weights [small_channels, image_channels / groups, *k].
// Each returns false, having written nothing, where oneDNN does not take the plan (the im2col
// path then runs). Only built where CMake found oneDNN (KILN_HAVE_ONEDNN).
#include "kiln/meta/convolution.h"

namespace kiln::cpu::onednn {

// small = convolution(image, weight) + bias (kiln's convolution; a transposed one's input
// gradient); bias may be null.
bool small_from_image(const meta::ConvPlan& plan, float* small, const float* image, const float* weight,
                      const float* bias);
// image = the adjoint of that (a transposed convolution; a convolution's input gradient)
bool image_from_small(const meta::ConvPlan& plan, float* image, const float* small, const float* weight);
// grad_weight = the weight's gradient given the small side's gradient and the image
bool weight_grad(const meta::ConvPlan& plan, float* grad_weight, const float* small, const float* image);

}  // namespace kiln::cpu::onednn
#endif  // KILN_KERNELS_CPU_ONEDNN_CONV_H_
