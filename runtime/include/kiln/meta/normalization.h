#ifndef KILN_RUNTIME_INCLUDE_KILN_META_NORMALIZATION_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_NORMALIZATION_H_
// Normalization ops' meta steps (`meta: layer_norm`, `layer_norm_backward`, `batch_norm`,
// `batch_norm_backward`, `group_norm`, `group_norm_backward`): PyTorch's checks and messages, and
// the [M, N] rows both backends walk (N = normalized_shape's numel), batch norm's [N, C, HW]
// planes, or group norm's [N, group, C / group, HxW] blocks.
//   void kiln::<backend>::native_layer_norm(const meta::LayerNormPlan& plan, const TensorBase& output,
//       const TensorBase& mean, const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
//       const TensorBase& bias)
//   void kiln::<backend>::native_layer_norm_backward(const meta::LayerNormPlan& plan, const TensorBase& grad_input,
//       const TensorBase& grad_weight, const TensorBase& grad_bias, const TensorBase& grad_out,
//       const TensorBase& input, const TensorBase& mean, const TensorBase& rstd, const TensorBase& weight,
//       const TensorBase& bias)
//   void kiln::<backend>::_batch_norm_training(const meta::BatchNormPlan& plan, const TensorBase& output,
//       const TensorBase& save_mean, const TensorBase& save_invstd, const TensorBase& input,
//       const TensorBase& weight, const TensorBase& bias)
//   void kiln::<backend>::_batch_norm_training_backward(const meta::BatchNormPlan& plan,
//       const TensorBase& grad_input, const TensorBase& grad_weight, const TensorBase& grad_bias,
//       const TensorBase& grad_out, const TensorBase& input, const TensorBase& weight,
//       const TensorBase& save_mean, const TensorBase& save_invstd)
//   void kiln::<backend>::_group_norm_fused(const meta::GroupNormPlan& plan, const TensorBase& output,
//       const TensorBase& mean, const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
//       const TensorBase& bias)
//   void kiln::<backend>::_group_norm_fused_backward(const meta::GroupNormPlan& plan,
//       const TensorBase& grad_input, const TensorBase& grad_weight, const TensorBase& grad_bias,
//       const TensorBase& grad_out, const TensorBase& input, const TensorBase& mean, const TensorBase& rstd,
//       const TensorBase& weight)
// Tensors are contiguous; weight and bias may be undefined (no affine step; the backward then
// still writes grad_weight and grad_bias as if they were ones and zeros). Batch norm walks an
// input [N, C, *] as N * C planes of HW elements; its statistics are per channel, in the
// compute dtype (float32 for 16-bit inputs). Group norm walks N * C * HxW values as N * group
// contiguous blocks of (C / group) channels of HxW elements; its statistics are per (sample,
// group), [N, group], in the input's dtype.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct LayerNormPlan {
  int64_t M = 0, N = 0;  // rows, and elements per row
  double eps = 0;
  DimVector sizes;        // input's (output, grad_input)
  DimVector stat_sizes;   // mean's and rstd's: input's batch dims, then one 1 per normalized dim
  DimVector param_sizes;  // normalized_shape (grad_weight, grad_bias)
  DType dtype = DType::Float32;
};

struct BatchNormPlan {
  int64_t N = 0, C = 0, HW = 0;  // samples, channels, elements per (sample, channel) plane
  double eps = 0;
  DimVector sizes;       // input's (output, grad_input)
  DimVector stat_sizes;  // [C]: save_mean, save_invstd, grad_weight, grad_bias
  DType dtype = DType::Float32;
  DType stat_dtype = DType::Float32;  // the compute dtype: float32 for 16-bit inputs
};

struct GroupNormPlan {
  int64_t N = 0, C = 0, HxW = 0, group = 0;  // samples, channels, elements per (sample, channel), groups
  double eps = 0;
  DimVector sizes;        // input's (output, grad_input)
  DimVector stat_sizes;   // [N, group]: mean, rstd
  DimVector param_sizes;  // [C]: grad_weight, grad_bias
  DType dtype = DType::Float32;
};

LayerNormPlan layer_norm(const char* op, const TensorBase& input, IntArrayRef normalized_shape,
                         const TensorBase& weight, const TensorBase& bias, double eps);
LayerNormPlan layer_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  IntArrayRef normalized_shape, const TensorBase& mean, const TensorBase& rstd,
                                  const TensorBase& weight, const TensorBase& bias);

BatchNormPlan batch_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                         double eps);
BatchNormPlan batch_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  const TensorBase& weight, const TensorBase& save_mean,
                                  const TensorBase& save_invstd);

// native_group_norm's shape checks with PyTorch's messages (group > 0, C divisible by group, input
// holding N * C * HxW values with C channels, weight and bias of C elements), shared by the
// composite and the fused op's meta step.
void check_group_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                      int64_t N, int64_t C, int64_t HxW, int64_t group);
GroupNormPlan group_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                         int64_t N, int64_t C, int64_t HxW, int64_t group, double eps);
GroupNormPlan group_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  const TensorBase& mean, const TensorBase& rstd, const TensorBase& weight, int64_t N,
                                  int64_t C, int64_t HxW, int64_t group);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_NORMALIZATION_H_
