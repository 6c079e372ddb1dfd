// Backward helpers of the convolution ops (see kiln/autograd/formulas.h). A convolution is
// linear in its input, and its input's gradient is the adjoint convolution (the transposed one
// of a convolution, the plain one of a transposed convolution) with the same weight, so the
// formulas call kiln::convolution and are differentiable themselves.
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/col2im.h"
#include "kiln/gen/api/convolution.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/sum.h"
#include "kiln/meta/convolution.h"

namespace kiln {

TensorBase conv_input_backward(const TensorBase& grad, IntArrayRef input_sizes, const TensorBase& weight,
                               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                               IntArrayRef output_padding, int64_t groups) {
  const char* op = "convolution_backward";
  const int64_t dims = weight.dim() - 2;
  const DimVector s = meta::expand_conv_param(op, "stride", stride, dims);
  const DimVector p = meta::expand_conv_param(op, "padding", padding, dims);
  const DimVector d = meta::expand_conv_param(op, "dilation", dilation, dims);
  if (!transposed) {
    // the transposed convolution's size falls short of the input's by what the forward's
    // windows skipped at the end: that is its output_padding (< stride)
    DimVector fill;
    for (int64_t i = 0; i < dims; ++i) {
      const int64_t reach =
          (grad.size(2 + i) - 1) * s[size_t(i)] - 2 * p[size_t(i)] + d[size_t(i)] * (weight.size(2 + i) - 1) + 1;
      fill.push_back(input_sizes[size_t(2 + i)] - reach);
    }
    return kiln::convolution(Tensor(grad), Tensor(weight), Tensor(), s, p, d, true, fill, groups);
  }
  // a transposed convolution's output_padding adds output the plain convolution also reads
  // windows of: trim them
  Tensor g =
      kiln::convolution(Tensor(grad), Tensor(weight), Tensor(), s, p, d, false, DimVector(size_t(dims), 0), groups);
  for (int64_t i = 0; i < dims; ++i)
    if (g.size(2 + i) != input_sizes[size_t(2 + i)]) g = kiln::narrow(g, 2 + i, 0, input_sizes[size_t(2 + i)]);
  return g;
}

TensorBase conv_forward_no_bias(const TensorBase& input, const TensorBase& weight, IntArrayRef stride,
                                IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                                int64_t groups) {
  return kiln::convolution(Tensor(input), Tensor(weight), Tensor(), stride, padding, dilation, transposed,
                           output_padding, groups);
}

TensorBase conv_bias_backward(const TensorBase& grad) {
  DimVector dims{0};
  for (int64_t i = 2; i < grad.dim(); ++i) dims.push_back(i);
  return kiln::sum(Tensor(grad), dims.ref());
}

TensorBase im2col_backward(const TensorBase& grad, IntArrayRef self_sizes, IntArrayRef kernel_size,
                           IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const size_t n = self_sizes.size();
  const DimVector image{self_sizes[n - 2], self_sizes[n - 1]};
  return kiln::col2im(Tensor(grad), image, kernel_size, dilation, padding, stride);
}

}  // namespace kiln
