// Normalization ops' meta steps (see kiln/meta/normalization.h).
#include "kiln/meta/normalization.h"

namespace kiln::meta {
namespace {

void check_param(const char* op, const char* name, const TensorBase& p, const TensorBase& input,
                 IntArrayRef normalized_shape) {
  if (!p.defined()) return;
  KILN_CHECK(p.sizes().equals(normalized_shape), ShapeError, op, name, "Expected ", name,
             " to be of same shape as normalized_shape, but got ", name, " of shape ", shape_str(p.sizes()),
             " and normalized_shape = ", shape_str(normalized_shape));
  KILN_CHECK(p.dtype() == input.dtype(), DTypeError, op, name, "expected ", name, " to have dtype ",
             dtype_name(input.dtype()), ", got ", dtype_name(p.dtype()));
  KILN_CHECK(p.device() == input.device(), DeviceError, op, name, "expected ", name, " on ", input.device().str(),
             ", got ", p.device().str());
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
  KILN_CHECK(grad_out.sizes().equals(input.sizes()), ShapeError, op, "grad_out", "expected grad_out of shape ",
             shape_str(input.sizes()), ", got ", shape_str(grad_out.sizes()));
  for (const auto& [name, t] : {std::pair<const char*, const TensorBase*>{"mean", &mean}, {"rstd", &rstd}})
    KILN_CHECK(t->numel() == plan.M, ShapeError, op, name, "expected ", name, " with ", plan.M,
               " elements (one per row), got ", shape_str(t->sizes()));
  for (const auto& [name, t] :
       {std::pair<const char*, const TensorBase*>{"grad_out", &grad_out}, {"mean", &mean}, {"rstd", &rstd}})
    KILN_CHECK(t->dtype() == input.dtype(), DTypeError, op, name, "expected ", name, " to have dtype ",
               dtype_name(input.dtype()), ", got ", dtype_name(t->dtype()));
  return plan;
}

}  // namespace kiln::meta
