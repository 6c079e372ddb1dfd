// torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (PyTorch 1.13's arithmetic and order).
#include "kiln/clip_grad.h"
#include <cmath>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/_foreach_norm.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/stack.h"

namespace kiln::nn::utils {
namespace {

TensorList grads_of(const TensorList& parameters) {
  TensorList grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad().detach());
  return grads;
}

}  // namespace

Tensor clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
  const char* op = "clip_grad_norm_";
  KILN_CHECK(norm_type >= 0, ValueError, op, "norm_type", "norm_type must be non-negative, got ", norm_type);
  NoGradGuard no_grad;
  const TensorList grads = grads_of(parameters);
  if (grads.empty()) return zeros({});
  const Device device = grads[0].device();
  const TensorList norms = _foreach_norm(grads, Scalar(norm_type));
  TensorList on_device;
  for (const Tensor& n : norms) on_device.push_back(n.to(device));
  const Tensor total = std::isinf(norm_type) ? kiln::max(stack(on_device)) : norm(stack(on_device), Scalar(norm_type));
  if (error_if_nonfinite) {
    const double t = total.item<double>();
    KILN_CHECK(std::isfinite(t), ValueError, op, "parameters", "The total norm of order ", norm_type,
               " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
               "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  }
  const Tensor coef = clamp(max_norm / (total + 1e-6), std::nullopt, Scalar(1.0));
  for (const Tensor& g : grads) {
    Tensor target = g;
    target.mul_(coef.to(g.device()));
  }
  return total;
}

void clip_grad_value_(const TensorList& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (Tensor g : grads_of(parameters)) g.clamp_(-clip_value, clip_value);
}

}  // namespace kiln::nn::utils
