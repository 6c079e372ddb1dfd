#ifndef KILN_RUNTIME_INCLUDE_KILN_META_CONVOLUTION_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_CONVOLUTION_H_
// Convolution's meta steps (`meta: convolution`, `convolution_backward_weight`, `im2col`,
// `col2im`): PyTorch's checks and messages, and one description of the product both backends
// run. Every convolution is a matrix product with an im2col'd "image" (kiln/common/im2col.h):
//   small[n, g] = W[g] @ im2col(image[n])[g]          (convolution; transposed: its adjoint)
// where, per sample, `image` is the tensor with the kernel windows (the input, or the output of
// a transposed convolution) and `small` the other one, and W is the weight as
// [small_channels, image_channels / groups * kernel numel] (both layouts of PyTorch's weight).
//   void kiln::<backend>::convolution(const meta::ConvPlan& plan, const TensorBase& out,
//       const TensorBase& input, const TensorBase& weight, const TensorBase& bias)
//   void kiln::<backend>::convolution_backward_weight(const meta::ConvPlan& plan,
//       const TensorBase& grad_weight, const TensorBase& grad_output, const TensorBase& input)
//   void kiln::<backend>::im2col(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self)
//   void kiln::<backend>::col2im(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self)
// Tensors are contiguous; bias may be undefined.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct ConvPlan {
  int64_t dims = 2;  // spatial dims, 1 to 3
  int64_t batch = 0, groups = 1;
  bool transposed = false;
  int64_t image_channels = 0, small_channels = 0;
  DimVector image_sizes, small_sizes;  // spatial sizes of the two sides
  DimVector kernel, stride, padding, dilation;
  DimVector sizes;  // the result's
  DType dtype = DType::Float32;

  int64_t kernel_numel() const;
  int64_t image_numel() const;  // one channel's spatial elements
  int64_t small_numel() const;
  int64_t col_rows() const { return image_channels * kernel_numel(); }  // rows of im2col(image[n])
};

// input [N, C_in, *], weight [C_out, C_in / groups, *k] ([C_in, C_out / groups, *k] when transposed).
ConvPlan convolution(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                     IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                     IntArrayRef output_padding, int64_t groups);
// The weight's gradient of convolution(input, weight of weight_size, ...) given grad_output.
ConvPlan convolution_backward_weight(const char* op, const TensorBase& grad_output, const TensorBase& input,
                                     IntArrayRef weight_size, IntArrayRef stride, IntArrayRef padding,
                                     IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups);
// torch.nn.functional.unfold / fold: [N, C, H, W] <-> [N, C * kh * kw, L] (also unbatched).
ConvPlan im2col(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef dilation,
                IntArrayRef padding, IntArrayRef stride);
ConvPlan col2im(const char* op, const TensorBase& self, IntArrayRef output_size, IntArrayRef kernel_size,
                IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);

// PyTorch's rule for a per-dim argument: one value for every dim, or one per dim.
DimVector expand_conv_param(const char* op, const char* name, IntArrayRef values, int64_t dims);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_CONVOLUTION_H_
