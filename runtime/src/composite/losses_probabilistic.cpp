// Losses over probabilities and distributions: binary_cross_entropy (with logits), kl_div,
// poisson_nll_loss, gaussian_nll_loss; PyTorch 1.13's formulas, term for term.
#include <cmath>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/binary_cross_entropy.h"
#include "kiln/gen/api/binary_cross_entropy_with_logits.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/gaussian_nll_loss.h"
#include "kiln/gen/api/kl_div.h"
#include "kiln/gen/api/log.h"
#include "kiln/gen/api/log1p.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/logical_not.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/neg.h"
#include "kiln/gen/api/poisson_nll_loss.h"
#include "kiln/gen/api/unsqueeze.h"
#include "kiln/gen/api/where.h"
#include "loss_support.h"

namespace kiln::composite {
namespace {

// max(log(v), -100) as PyTorch's binary_cross_entropy, and -100 where v is 0: the log is taken
// of 1 there, so its gradient is 0 rather than 0 * inf = NaN.
Tensor clamped_log(const Tensor& v) {
  Tensor positive = v > 0;
  Tensor safe = kiln::where(positive, v, wrapped_scalar(1.0));
  return kiln::where(positive, kiln::clamp(kiln::log(safe), -100.0), wrapped_scalar(-100.0));
}

// max(log1p(-v), -100), -100 where v is 1 (same reason).
Tensor clamped_log1m(const Tensor& v) {
  Tensor below_one = v < 1;
  Tensor safe = kiln::where(below_one, v, wrapped_scalar(0.0));
  return kiln::where(below_one, kiln::clamp(kiln::log1p(kiln::neg(safe)), -100.0), wrapped_scalar(-100.0));
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  const char* op = "binary_cross_entropy";
  loss::check_reduction(op, reduction);
  KILN_CHECK(self.sizes().equals(target.sizes()), ShapeError, op, "target", "Using a target size (",
             loss::torch_size(target.sizes()), ") that is different to the input size (",
             loss::torch_size(self.sizes()), ") is deprecated. Please ensure they have the same size.");
  if (weight.defined()) loss::check_broadcast(op, "weight", self, weight);
  // PyTorch's CPU kernel checks every value (a NaN fails too); this reads one bool to the host.
  Tensor inside = kiln::logical_and(self >= 0, self <= 1);
  KILN_CHECK(!kiln::any(kiln::logical_not(inside)).item<bool>(), ValueError, op, "self",
             "all elements of input should be between 0 and 1");
  Tensor loss = (target - 1.0) * clamped_log1m(self) - target * clamped_log(self);
  if (weight.defined()) loss = loss * weight;
  return loss::reduce(op, loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, int64_t reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  loss::check_reduction(op, reduction);
  KILN_CHECK(self.sizes().equals(target.sizes()), ShapeError, op, "target", "Target size (",
             loss::torch_size(target.sizes()), ") must be the same as input size (", loss::torch_size(self.sizes()),
             ")");
  if (weight.defined()) loss::check_broadcast(op, "weight", self, weight);
  if (pos_weight.defined()) loss::check_broadcast(op, "pos_weight", self, pos_weight);
  // log(1 + exp(-x)) without overflow: m + log(exp(-m) + exp(-x - m)), m = max(-x, 0).
  Tensor m = kiln::clamp(kiln::neg(self), 0.0);
  Tensor softplus_neg = m + kiln::log(kiln::exp(kiln::neg(m)) + kiln::exp(kiln::neg(self) - m));
  if (pos_weight.defined()) softplus_neg = ((pos_weight - 1.0) * target + 1.0) * softplus_neg;
  Tensor loss = (1.0 - target) * self + softplus_neg;
  if (weight.defined()) loss = loss * weight;
  return loss::reduce(op, loss, reduction);
}

Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  const char* op = "kl_div";
  loss::check_reduction(op, reduction);
  loss::check_broadcast(op, "target", self, target);
  if (log_target) return loss::reduce(op, kiln::exp(target) * (target - self), reduction);
  // xlogy(target, target): 0 where target is 0 (its log is taken of 1 there).
  Tensor xlogx = target * kiln::log(kiln::where(target == 0, wrapped_scalar(1.0), target));
  return loss::reduce(op, xlogx - target * self, reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        int64_t reduction) {
  const char* op = "poisson_nll_loss";
  loss::check_reduction(op, reduction);
  loss::check_broadcast(op, "target", input, target);
  Tensor loss = log_input ? kiln::exp(input) - target * input : input - target * kiln::log(input + eps);
  if (full) {
    // Stirling's approximation of log(target!), for targets above 1 only; the others take 1
    // so that the masked-out terms have finite gradients.
    Tensor small = target <= 1;
    Tensor t = kiln::where(small, wrapped_scalar(1.0), target);
    Tensor stirling = t * kiln::log(t) - t + kiln::log(t * (2 * M_PI)) * 0.5;
    loss = loss + kiln::masked_fill(stirling, small, 0.0);
  }
  return loss::reduce(op, loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         int64_t reduction) {
  const char* op = "gaussian_nll_loss";
  loss::check_reduction(op, reduction);
  Tensor v = var;
  if (!var.sizes().equals(input.sizes())) {
    // One variance per sample for all its features (var [N] or [N, 1] for input [N, D]).
    const IntArrayRef in = input.sizes(), vs = var.sizes();
    const IntArrayRef in_lead(in.data(), in.empty() ? 0 : in.size() - 1);
    const bool lost_last = !in.empty() && vs.equals(in_lead);
    const bool last_is_one = !in.empty() && vs.size() == in.size() && vs.back() == 1 &&
                             IntArrayRef(vs.data(), vs.size() - 1).equals(in_lead);
    KILN_CHECK(lost_last || last_is_one, ShapeError, op, "var", "var is of incorrect size");
    if (lost_last) v = kiln::unsqueeze(var, -1);
  }
  KILN_CHECK(!kiln::any(var < 0).item<bool>(), ValueError, op, "var", "var has negative entry/entries");
  // PyTorch clamps var to eps under no_grad: the value is clamped, the gradient passes as is.
  Tensor held = v.detach();
  v = v + (kiln::clamp(held, eps) - held);
  Tensor diff = input - target;
  Tensor loss = (kiln::log(v) + diff * diff / v) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * M_PI);
  return loss::reduce(op, loss, reduction);
}

}  // namespace kiln::composite
