// Normalization ops' meta steps (see kiln/meta/normalization.h).
#include "kiln/meta/normalization.h"

#include <string>

namespace kiln::meta {
namespace {

// A parameter (weight, bias) in the input's dtype and on its device.
void check_like_input(const char* op, const char* name, const TensorBase& p, const TensorBase& input) {
  KILN_CHECK(p.dtype() == input.dtype(), DTypeError, op, name, "expected ", name, " to have dtype ",
             dtype_name(input.dtype()), ", got ", dtype_name(p.dtype()));
  KILN_CHECK(p.device() == input.device(), DeviceError, op, name, "expected ", name, " on ", input.device().str(),
             ", got ", p.device().str());
}

void check_param(const char* op, const char* name, const TensorBase& p, const TensorBase& input,
                 IntArrayRef normalized_shape) {
  if (!p.defined()) return;
  KILN_CHECK(p.sizes().equals(normalized_shape), ShapeError, op, name, "Expected ", name,
             " to be of same shape as normalized_shape, but got ", name, " of shape ", shape_str(p.sizes()),
             " and normalized_shape = ", shape_str(normalized_shape));
  check_like_input(op, name, p, input);
}

// A fused backward's grad_out (the input's shape) and saved mean and rstd (`count` elements, one
// `per` row or group), all in the input's dtype.
void check_grad_and_stats(const char* op, const TensorBase& grad_out, const TensorBase& input, const TensorBase& mean,
                          const TensorBase& rstd, int64_t count, const std::string& count_text, const char* per) {
  KILN_CHECK(grad_out.sizes().equals(input.sizes()), ShapeError, op, "grad_out", "expected grad_out of shape ",
             shape_str(input.sizes()), ", got ", shape_str(grad_out.sizes()));
  for (const auto& [name, t] : {std::pair<const char*, const TensorBase*>{"mean", &mean}, {"rstd", &rstd}})
    KILN_CHECK(t->numel() == count, ShapeError, op, name, "expected ", name, " with ", count_text, " elements (one per ",
               per, "), got ", shape_str(t->sizes()));
  for (const auto& [name, t] :
       {std::pair<const char*, const TensorBase*>{"grad_out", &grad_out}, {"mean", &mean}, {"rstd", &rstd}})
    KILN_CHECK(t->dtype() == input.dtype(), DTypeError, op, name, "expected ", name, " to have dtype ",
               dtype_name(input.dtype()), ", got ", dtype_name(t->dtype()));
}

}  // namespace

LayerNormPlan layer_norm(const char* op, const TensorBase& input, IntArrayRef normalized_shape,
                         const TensorBase& weight, const TensorBase& bias, double eps) {
  const int64_t k = int64_t(normalized_shape.size());
  KILN_CHECK(k >= 1, ShapeError, op, "normalized_shape",
             "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
             "normalized_shape = ",
             shape_str(normalized_shape));
  check_param(op, "weight", weight, input, normalized_shape);
  check_param(op, "bias", bias, input, normalized_shape);
  const int64_t axis = input.dim() - k;
  bool fits = axis >= 0;
  for (int64_t i = 0; fits && i < k; ++i) fits = input.size(axis + i) == normalized_shape[size_t(i)];
  // PyTorch's message: "... expected input with shape [*, 3, 4], but got input of size[2, 5]"
  KILN_CHECK(fits, ShapeError, op, "input", "Given normalized_shape=", shape_str(normalized_shape),
             ", expected input with shape [*, ", shape_str(normalized_shape).substr(1), ", but got input of size",
             shape_str(input.sizes()));
  KILN_CHECK(eps >= 0, ValueError, op, "eps", "expected eps >= 0, got ", eps);
  LayerNormPlan plan;
  plan.N = 1;
  for (int64_t d : normalized_shape) plan.N *= d;
  plan.M = 1;
  for (int64_t i = 0; i < axis; ++i) plan.M *= input.size(i);
  plan.eps = eps;
  plan.sizes = input.sizes();
  for (int64_t i = 0; i < input.dim(); ++i) plan.stat_sizes.push_back(i < axis ? input.size(i) : 1);
  plan.param_sizes = normalized_shape;
  plan.dtype = input.dtype();
  return plan;
}

LayerNormPlan layer_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  IntArrayRef normalized_shape, const TensorBase& mean, const TensorBase& rstd,
                                  const TensorBase& weight, const TensorBase& bias) {
  LayerNormPlan plan = layer_norm(op, input, normalized_shape, weight, bias, 0.0);
  check_grad_and_stats(op, grad_out, input, mean, rstd, plan.M, std::to_string(plan.M), "row");
  return plan;
}

BatchNormPlan batch_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                         double eps) {
  KILN_CHECK(input.dim() >= 2, ShapeError, op, "input", "expected 2 or more dimensions (got ", input.dim(), ")");
  BatchNormPlan plan;
  plan.N = input.size(0);
  plan.C = input.size(1);
  plan.HW = 1;
  for (int64_t d = 2; d < input.dim(); ++d) plan.HW *= input.size(d);
  for (const auto& [name, p] : {std::pair<const char*, const TensorBase*>{"weight", &weight}, {"bias", &bias}}) {
    if (!p->defined()) continue;
    // PyTorch's message: "weight should contain 3 elements not 4"
    KILN_CHECK(p->dim() == 1 && p->numel() == plan.C, ShapeError, op, name, name, " should contain ", plan.C,
               " elements not ", p->numel());
    check_like_input(op, name, *p, input);
  }
  KILN_CHECK(eps >= 0, ValueError, op, "eps", "expected eps >= 0, got ", eps);
  plan.eps = eps;
  plan.sizes = input.sizes();
  plan.stat_sizes = {plan.C};
  plan.dtype = input.dtype();
  plan.stat_dtype =
      input.dtype() == DType::Float16 || input.dtype() == DType::BFloat16 ? DType::Float32 : input.dtype();
  return plan;
}

BatchNormPlan batch_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  const TensorBase& weight, const TensorBase& save_mean,
                                  const TensorBase& save_invstd) {
  BatchNormPlan plan = batch_norm(op, input, weight, TensorBase(), 0.0);
  KILN_CHECK(grad_out.sizes().equals(input.sizes()), ShapeError, op, "grad_out", "expected grad_out of shape ",
             shape_str(input.sizes()), ", got ", shape_str(grad_out.sizes()));
  KILN_CHECK(grad_out.dtype() == input.dtype(), DTypeError, op, "grad_out", "expected grad_out to have dtype ",
             dtype_name(input.dtype()), ", got ", dtype_name(grad_out.dtype()));
  for (const auto& [name, t] :
       {std::pair<const char*, const TensorBase*>{"save_mean", &save_mean}, {"save_invstd", &save_invstd}}) {
    KILN_CHECK(t->numel() == plan.C, ShapeError, op, name, "expected ", name, " with ", plan.C,
               " elements (one per channel), got ", shape_str(t->sizes()));
    KILN_CHECK(t->dtype() == plan.stat_dtype, DTypeError, op, name, "expected ", name, " to have dtype ",
               dtype_name(plan.stat_dtype), ", got ", dtype_name(t->dtype()));
  }
  return plan;
}

void check_group_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                      int64_t N, int64_t C, int64_t HxW, int64_t group) {
  KILN_CHECK(group > 0, ValueError, op, "group", "Expected num groups to be greater than 0, got ", group);
  KILN_CHECK(C % group == 0, ShapeError, op, "group",
             "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
             shape_str(input.sizes()), " and num_groups=", group);
  // in 128 bits: N, C and HxW are caller-given and their product may not fit int64
  const __int128 expected = __int128(N) * __int128(C) * __int128(HxW);
  KILN_CHECK(
      N >= 0 && C >= 0 && HxW >= 0 && __int128(input.numel()) == expected && (input.dim() < 2 || input.size(1) == C),
      ShapeError, op, "input", "Expected the input of shape ", shape_str(input.sizes()), " to hold N * C * HxW = ", N,
      " * ", C, " * ", HxW, " values");
  for (const auto& [name, t] : {std::pair<const char*, const TensorBase*>{"weight", &weight}, {"bias", &bias}})
    KILN_CHECK(!t->defined() || (t->dim() == 1 && t->numel() == C), ShapeError, op, name, "Expected ", name,
               " to be a vector of size equal to the number of channels in input, but got ", name, " of shape ",
               t->defined() ? shape_str(t->sizes()) : std::string("[]"), " and input of shape ",
               shape_str(input.sizes()));
}

GroupNormPlan group_norm(const char* op, const TensorBase& input, const TensorBase& weight, const TensorBase& bias,
                         int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  check_group_norm(op, input, weight, bias, N, C, HxW, group);
  for (const auto& [name, p] : {std::pair<const char*, const TensorBase*>{"weight", &weight}, {"bias", &bias}})
    if (p->defined()) check_like_input(op, name, *p, input);
  KILN_CHECK(eps >= 0, ValueError, op, "eps", "expected eps >= 0, got ", eps);
  GroupNormPlan plan;
  plan.N = N;
  plan.C = C;
  plan.HxW = HxW;
  plan.group = group;
  plan.eps = eps;
  plan.sizes = input.sizes();
  plan.stat_sizes = {N, group};
  plan.param_sizes = {C};
  plan.dtype = input.dtype();
  return plan;
}

GroupNormPlan group_norm_backward(const char* op, const TensorBase& grad_out, const TensorBase& input,
                                  const TensorBase& mean, const TensorBase& rstd, const TensorBase& weight, int64_t N,
                                  int64_t C, int64_t HxW, int64_t group) {
  GroupNormPlan plan = group_norm(op, input, weight, TensorBase(), N, C, HxW, group, 0.0);
  check_grad_and_stats(op, grad_out, input, mean, rstd, N * group, "N * group = " + std::to_string(N * group),
                       "sample and group");
  return plan;
}

}  // namespace kiln::meta
