// conv1d/2d/3d and conv_transpose1d/2d/3d over the `convolution` kernel op: unbatched inputs
// get a batch of one, and padding='same' pads each side by half the kernel's reach; an uneven
// reach pads one more on both sides and drops the first output, which is PyTorch's extra
// padding on the right without a padded copy of the input.
#include "kiln/core.h"
#include "kiln/gen/api/convolution.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/squeeze.h"
#include "kiln/gen/api/unsqueeze.h"
#include "kiln/gen/composite.h"
#include "kiln/meta/convolution.h"

namespace kiln::composite {
namespace {

Tensor conv_nd(const char* op, int64_t dims, const Tensor& input, const Tensor& weight, const Tensor& bias,
               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
               IntArrayRef output_padding, int64_t groups) {
  const bool batched = input.dim() == dims + 2;
  KILN_CHECK(batched || input.dim() == dims + 1, ShapeError, op, "input", "Expected ", dims + 1, "D (unbatched) or ",
             dims + 2, "D (batched) input to ", op, ", but got input of size: ", shape_str(input.sizes()));
  const Tensor x = batched ? input : kiln::unsqueeze(input, 0);
  const Tensor y = kiln::convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  return batched ? y : kiln::squeeze(y, 0);
}

Tensor conv_padding_nd(const char* op, int64_t dims, const Tensor& input, const Tensor& weight, const Tensor& bias,
                       IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  const DimVector zeros(size_t(dims), 0);
  if (padding == "valid") return conv_nd(op, dims, input, weight, bias, stride, zeros, dilation, false, zeros, groups);
  KILN_CHECK(padding == "same", ValueError, op, "padding", "Invalid padding string: '", padding, "'");
  for (int64_t s : meta::expand_conv_param(op, "stride", stride, dims))
    KILN_CHECK(s == 1, ValueError, op, "padding", "padding='same' is not supported for strided convolutions");
  KILN_CHECK(weight.dim() == dims + 2, ShapeError, op, "weight", "expected a ", dims + 2,
             "-dimensional weight, got weight of size ", shape_str(weight.sizes()));
  const DimVector d = meta::expand_conv_param(op, "dilation", dilation, dims);
  DimVector pad;
  for (int64_t i = 0; i < dims; ++i) pad.push_back((d[size_t(i)] * (weight.size(2 + i) - 1) + 1) / 2);
  Tensor y = conv_nd(op, dims, input, weight, bias, stride, pad, dilation, false, zeros, groups);
  const int64_t first_spatial = y.dim() - dims;
  for (int64_t i = 0; i < dims; ++i)
    if (d[size_t(i)] * (weight.size(2 + i) - 1) % 2 == 1)
      y = kiln::narrow(y, first_spatial + i, 1, input.size(input.dim() - dims + i));
  return y;
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, false, {0}, groups);
}

Tensor conv1d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                      std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                      std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d_padding(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                      std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, true, output_padding, groups);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, true, output_padding, groups);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, true, output_padding, groups);
}

}  // namespace kiln::composite
