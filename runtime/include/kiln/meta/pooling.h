#ifndef KILN_RUNTIME_INCLUDE_KILN_META_POOLING_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_POOLING_H_
// Meta steps of the 2-d pooling and resampling ops (ops/pooling.yaml): PyTorch 1.13's checks and
// messages, output sizes (ceil_mode as PyTorch: the last window starts inside the input or the
// left padding), and the geometry both backends walk (kiln/common/pooling_index.h). Every kernel
// gets the plan and contiguous tensors only, e.g.
//   void kiln::<backend>::max_pool2d_with_indices(const meta::Pool2dPlan& plan, const TensorBase& output,
//       const TensorBase& indices, const TensorBase& self)
// Inputs are [C, H, W] or [N, C, H, W] (upsampling: [N, C, H, W]) seen as plan.geometry.planes
// planes of H x W; an empty batch gives an empty result.
#include <optional>
#include "kiln/common/pooling_index.h"
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct Pool2dPlan {
  pool::Geometry2d geometry;
  DimVector sizes;  // the result's (the input's, for a backward)
  DType dtype = DType::Float32;
};

Pool2dPlan max_pool2d(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
Pool2dPlan max_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                               bool ceil_mode, const TensorBase& indices);
Pool2dPlan avg_pool2d(const char* op, const TensorBase& self, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override);
Pool2dPlan avg_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                               IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override);
// _adaptive_avg_pool2d and adaptive_max_pool2d; their backwards (indices: adaptive_max's).
Pool2dPlan adaptive_pool2d(const char* op, const TensorBase& self, IntArrayRef output_size);
Pool2dPlan adaptive_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self);
Pool2dPlan adaptive_pool2d_backward(const char* op, const TensorBase& grad_output, const TensorBase& self,
                                    const TensorBase& indices);
Pool2dPlan upsample_nearest2d(const char* op, const TensorBase& self, IntArrayRef output_size,
                              std::optional<double> scales_h, std::optional<double> scales_w);
Pool2dPlan upsample_nearest2d_backward(const char* op, const TensorBase& grad_output, IntArrayRef output_size,
                                       IntArrayRef input_size, std::optional<double> scales_h,
                                       std::optional<double> scales_w);
Pool2dPlan upsample_bilinear2d(const char* op, const TensorBase& self, IntArrayRef output_size, bool align_corners,
                               std::optional<double> scales_h, std::optional<double> scales_w);
Pool2dPlan upsample_bilinear2d_backward(const char* op, const TensorBase& grad_output, IntArrayRef output_size,
                                        IntArrayRef input_size, bool align_corners, std::optional<double> scales_h,
                                        std::optional<double> scales_w);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_POOLING_H_
