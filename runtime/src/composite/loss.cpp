// Losses composed of other ops (autograd records the parts): cross_entropy (class indices or
// class probabilities, label smoothing, weights), nll_loss2d, mse_loss.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/mse_loss.h"
#include "kiln/gen/api/neg.h"
#include "kiln/gen/api/nll_loss.h"
#include "kiln/gen/api/nll_loss2d.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/sub.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/view.h"
#include "kiln/gen/api/where.h"
#include "loss_support.h"

namespace kiln::composite {
namespace {

// weight [C] as [1, C, 1, ...], to broadcast against [N, C, d1, ...] (unchanged for 1-d self).
Tensor class_weight_view(const Tensor& weight, int64_t self_dim) {
  if (self_dim <= 1) return weight;
  DimVector shape(size_t(self_dim), 1);
  shape[1] = weight.size(0);
  return kiln::view(weight, shape);
}

// PyTorch's cross_entropy_loss_prob_target: target holds each class's probability.
Tensor cross_entropy_probabilities(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                                   int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  KILN_CHECK(is_floating(target.dtype()), DTypeError, op, "target",
             "Expected floating point type for target with class probabilities, got ", dtype_name(target.dtype()));
  KILN_CHECK(ignore_index < 0, ValueError, op, "ignore_index",
             "ignore_index is not supported for floating point target");
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t C = self.size(class_dim);
  KILN_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C), ShapeError, op, "weight",
             "cross_entropy: weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
  Tensor logp = kiln::log_softmax(self, class_dim);
  Tensor probs = label_smoothing > 0.0 ? target * (1.0 - label_smoothing) + label_smoothing / double(C) : target;
  Tensor terms = logp * probs;
  if (weight.defined()) terms = terms * class_weight_view(weight, self.dim());
  if (reduction == 0) return kiln::neg(kiln::sum(terms, IntArrayRef{class_dim}));
  Tensor total = kiln::neg(kiln::sum(terms));
  // Mean divides by the number of samples (positions), whatever the weights.
  return reduction == 1 ? total / double(self.numel() / std::max<int64_t>(C, 1)) : total;
}

// PyTorch's cross_entropy_loss_label_smoothing: class indices, the smoothing term weighted by
// weight[c] and, for mean, divided as nll_loss is (by the weight of the non-ignored targets).
Tensor cross_entropy_smoothed(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                              int64_t ignore_index, double label_smoothing) {
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t C = self.size(class_dim);
  Tensor logp = kiln::log_softmax(self, class_dim);
  Tensor nll = kiln::nll_loss(logp, target, weight, reduction, ignore_index);
  Tensor ignored = target == ignore_index;
  Tensor weighted = weight.defined() ? logp * class_weight_view(weight, self.dim()) : logp;
  Tensor smooth = kiln::masked_fill(kiln::neg(kiln::sum(weighted, IntArrayRef{class_dim})), ignored, 0.0);
  if (reduction == 1) {
    Tensor kept = kiln::where(ignored, kiln::zeros({}, self.options()), kiln::ones({}, self.options()));
    if (weight.defined()) {
      Tensor safe = kiln::where(ignored, wrapped_scalar(0), target);
      kept = kept * kiln::reshape(kiln::index_select(weight, 0, kiln::reshape(safe, {-1})), target.sizes());
    }
    smooth = kiln::sum(smooth) / kiln::sum(kept);
  } else if (reduction == 2) {
    smooth = kiln::sum(smooth);
  }
  return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / double(C));
}

}  // namespace

Tensor cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing) {
  const char* op = "cross_entropy";
  loss::check_reduction(op, reduction);
  KILN_CHECK(label_smoothing <= 1.0, ValueError, op, "label_smoothing",
             "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  KILN_CHECK(self.dim() >= 1, ShapeError, op, "self", "expected at least 1 dim, got 0");
  // A target of self's shape holds class probabilities (PyTorch's rule).
  if (self.sizes().equals(target.sizes()))
    return cross_entropy_probabilities(self, target, weight, reduction, ignore_index, label_smoothing);
  // A negative label_smoothing means none, as in PyTorch.
  if (label_smoothing > 0.0)
    return cross_entropy_smoothed(self, target, weight, reduction, ignore_index, label_smoothing);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  return kiln::nll_loss(kiln::log_softmax(self, class_dim), target, weight, reduction, ignore_index);
}

// nll_loss's 2-d spatial form (self [N, C, H, W], target [N, H, W]), which nll_loss covers.
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                  int64_t ignore_index) {
  const char* op = "nll_loss2d";
  KILN_CHECK(target.dim() == 3, ShapeError, op, "target",
             "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  KILN_CHECK(self.dim() == 4, ShapeError, op, "self",
             "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  return kiln::nll_loss(self, target, weight, reduction, ignore_index);
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  loss::check_reduction("mse_loss", reduction);
  Tensor diff = kiln::sub(self, target);
  return loss::reduce("mse_loss", diff * diff, reduction);
}

}  // namespace kiln::composite
