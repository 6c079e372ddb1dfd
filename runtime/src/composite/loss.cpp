// Losses composed of other ops (autograd records the parts): cross_entropy, mse_loss.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/mse_loss.h"
#include "kiln/gen/api/ne.h"
#include "kiln/gen/api/neg.h"
#include "kiln/gen/api/nll_loss.h"
#include "kiln/gen/api/sub.h"
#include "kiln/gen/api/sum.h"

namespace kiln::composite {

Tensor cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                     int64_t ignore_index, double label_smoothing) {
  KILN_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0, ValueError, "cross_entropy", "label_smoothing",
             "expected a value in [0, 1], got ", label_smoothing);
  KILN_CHECK(self.dim() >= 1, ShapeError, "cross_entropy", "self", "expected at least 1 dim, got 0");
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  Tensor logp = kiln::log_softmax(self, class_dim);
  Tensor loss = kiln::nll_loss(logp, target, weight, reduction, ignore_index);
  if (label_smoothing == 0.0) return loss;
  KILN_CHECK(!weight.defined(), NotImplementedError, "cross_entropy", "weight",
             "label_smoothing together with class weights is not implemented yet");
  Tensor smooth = kiln::neg(kiln::sum(logp, {class_dim})) / double(self.size(class_dim));
  Tensor valid = kiln::ne(target, wrapped_scalar(ignore_index));
  smooth = smooth * valid;
  if (reduction == 1) smooth = kiln::sum(smooth) / kiln::sum(valid);
  else if (reduction == 2) smooth = kiln::sum(smooth);
  return loss * (1.0 - label_smoothing) + smooth * label_smoothing;
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  Tensor diff = kiln::sub(self, target);
  Tensor sq = diff * diff;
  if (reduction == 0) return sq;
  if (reduction == 1) return kiln::mean(sq);
  KILN_CHECK(reduction == 2, ValueError, "mse_loss", "reduction", "expected 0 (none), 1 (mean) or 2 (sum), got ", reduction);
  return kiln::sum(sq);
}

}  // namespace kiln::composite
