// Adam and AdamW: one _fused_adam_ / _fused_adamw_ call per step over every parameter that has a
// gradient, after counting the step (as torch.optim does before its fused call).
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/_fused_adam_.h"
#include "kiln/gen/api/_fused_adamw_.h"
#include "kiln/optim.h"

namespace kiln::optim {

Adam::Adam(TensorList params, AdamOptions options) : Adam(std::move(params), options, "Adam", false) {}

Adam::Adam(TensorList params, AdamOptions options, const char* name, bool decoupled)
    : Optimizer(std::move(params), name), options_(options), decoupled_(decoupled) {
  const AdamOptions& o = options_;
  KILN_CHECK(o.lr >= 0, ValueError, name, "lr", "expected lr >= 0, got ", o.lr);
  KILN_CHECK(o.eps >= 0, ValueError, name, "eps", "expected eps >= 0, got ", o.eps);
  KILN_CHECK(o.beta1 >= 0 && o.beta1 < 1, ValueError, name, "beta1", "expected 0 <= beta1 < 1, got ", o.beta1);
  KILN_CHECK(o.beta2 >= 0 && o.beta2 < 1, ValueError, name, "beta2", "expected 0 <= beta2 < 1, got ", o.beta2);
  KILN_CHECK(o.weight_decay >= 0, ValueError, name, "weight_decay", "expected weight_decay >= 0, got ", o.weight_decay);
}

AdamW::AdamW(TensorList params, AdamOptions options) : Adam(std::move(params), options, "AdamW", true) {}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  TensorList params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
  for (size_t i : with_grad()) {
    params.push_back(params_[i]);
    grads.push_back(params_[i].grad());
    exp_avgs.push_back(buffer(i, "exp_avg"));
    exp_avg_sqs.push_back(buffer(i, "exp_avg_sq"));
    if (o.amsgrad) max_exp_avg_sqs.push_back(buffer(i, "max_exp_avg_sq"));
    steps.push_back(advance_step(i));
  }
  if (params.empty()) return;
  auto fused = decoupled_ ? &_fused_adamw_ : &_fused_adam_;
  try {
    fused(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, o.lr, o.beta1, o.beta2, o.weight_decay, o.eps,
          o.amsgrad, o.maximize, Tensor(), Tensor());
  } catch (...) {
    for (Tensor& s : steps) s.sub_(1);  // the op refused before writing: take the counts back too
    throw;
  }
}

}  // namespace kiln::optim
