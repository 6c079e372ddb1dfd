// Margin and ranking losses: margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
// multilabel_margin_loss, cosine_embedding_loss, triplet_margin_loss (PyTorch 1.13's formulas).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/cosine_embedding_loss.h"
#include "kiln/gen/api/cumprod.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/gather.h"
#include "kiln/gen/api/hinge_embedding_loss.h"
#include "kiln/gen/api/log1p.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/margin_ranking_loss.h"
#include "kiln/gen/api/minimum.h"
#include "kiln/gen/api/multilabel_margin_loss.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/neg.h"
#include "kiln/gen/api/pairwise_distance.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/soft_margin_loss.h"
#include "kiln/gen/api/sqrt.h"
#include "kiln/gen/api/triplet_margin_loss.h"
#include "kiln/gen/api/unsqueeze.h"
#include "kiln/gen/api/where.h"
#include "loss_support.h"

namespace kiln::composite {

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  const char* op = "margin_ranking_loss";
  loss::check_reduction(op, reduction);
  // torch.nn.functional's check (the aten op itself only broadcasts).
  KILN_CHECK(input1.dim() == input2.dim() && input1.dim() == target.dim(), ShapeError, op, "target",
             "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: ",
             loss::torch_size(input1.sizes()), ", input2: ", loss::torch_size(input2.sizes()),
             ", target: ", loss::torch_size(target.sizes()));
  Tensor loss = kiln::clamp(kiln::neg(target) * (input1 - input2) + margin, 0.0);
  return loss::reduce(op, loss, reduction);
}

Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  const char* op = "hinge_embedding_loss";
  loss::check_reduction(op, reduction);
  loss::check_broadcast(op, "target", self, target);
  // Where target is 1: self; where -1: max(margin - self, 0); any other value: both (PyTorch too).
  Tensor zero = wrapped_scalar(0.0);
  Tensor margin_part = kiln::where(target != 1, kiln::clamp(margin - self, 0.0), zero);
  Tensor self_part = kiln::where(target != -1, self, zero);
  return loss::reduce(op, margin_part + self_part, reduction);
}

Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  const char* op = "soft_margin_loss";
  loss::check_reduction(op, reduction);
  loss::check_broadcast(op, "target", self, target);
  return loss::reduce(op, kiln::log1p(kiln::exp(kiln::neg(self) * target)), reduction);
}

Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  const char* op = "multilabel_margin_loss";
  loss::check_reduction(op, reduction);
  const int64_t ndim = self.dim();
  KILN_CHECK((ndim <= 1 && self.numel() > 0) || (ndim == 2 && self.size(1) > 0), ShapeError, op, "self",
             "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", shape_str(self.sizes()));
  KILN_CHECK(target.dtype() == DType::Int64, DTypeError, op, "target", "expected scalar type Long but found ",
             dtype_name(target.dtype()));
  const int64_t N = ndim <= 1 ? 1 : self.size(0);
  const int64_t C = ndim == 0 ? 1 : self.size(ndim - 1);
  const bool target_fits = ndim <= 1 ? target.dim() <= 1 && target.numel() == C
                                     : target.dim() == 2 && target.size(0) == N && target.size(1) == C;
  KILN_CHECK(target_fits, ShapeError, op, "target", "inconsistent size ", shape_str(target.sizes()),
             " for argument #2 'target'");
  KILN_CHECK(!kiln::any(kiln::logical_or(target < -1, target >= C)).item<bool>(), IndexError, op, "target",
             "argument #2 'target' is out of range");
  Tensor x = kiln::reshape(self, {N, C});
  Tensor t = kiln::reshape(target, {N, C});
  // Each row's targets are its entries before the first -1.
  Tensor listed = kiln::cumprod(t >= 0, 1) != 0;
  Tensor safe = kiln::where(listed, t, wrapped_scalar(0));
  // is_target[n, c]: c is one of row n's targets (unlisted entries scatter into a spare column C).
  Tensor spare = kiln::where(listed, t, wrapped_scalar(C));
  Tensor is_target = kiln::narrow(kiln::scatter(kiln::zeros({N, C + 1}, x.options()), 1, spare, 1.0), 1, 0, C);
  // Every (listed target j, non-target i) pair adds max(0, 1 - (x[j] - x[i])).
  Tensor x_target = kiln::gather(x, 1, safe);
  Tensor hinge = kiln::clamp(kiln::unsqueeze(x, 1) - kiln::unsqueeze(x_target, 2) + 1.0, 0.0);
  Tensor pairs = kiln::unsqueeze(listed, 2) * kiln::unsqueeze(1.0 - is_target, 1);
  Tensor loss = kiln::sum(hinge * pairs, IntArrayRef{1, 2}) / double(C);
  if (ndim <= 1) loss = kiln::reshape(loss, {});
  return loss::reduce(op, loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             int64_t reduction) {
  const char* op = "cosine_embedding_loss";
  loss::check_reduction(op, reduction);
  const int64_t tdim = target.dim();
  KILN_CHECK(tdim <= 1, ShapeError, op, "target", "0D or 1D target tensor expected, multi-target not supported");
  KILN_CHECK(input1.dim() == tdim + 1 && input2.dim() == tdim + 1, ShapeError, op, "input1", tdim,
             "D target tensor expects ", tdim + 1, "D input tensors, but found inputs with sizes ",
             shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  constexpr double kEpsilon = 1e-12;  // PyTorch's, keeps a zero vector's cosine finite
  Tensor prod_sum = kiln::sum(input1 * input2, IntArrayRef{tdim});
  Tensor mag1 = kiln::sum(input1 * input1, IntArrayRef{tdim}) + kEpsilon;
  Tensor mag2 = kiln::sum(input2 * input2, IntArrayRef{tdim}) + kEpsilon;
  Tensor cos = prod_sum / kiln::sqrt(mag1 * mag2);
  Tensor zero = wrapped_scalar(0.0);
  Tensor pos = kiln::where(target == 1, 1.0 - cos, zero);
  Tensor neg = kiln::where(target == -1, kiln::clamp(cos - margin, 0.0), zero);
  return loss::reduce(op, pos + neg, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, int64_t reduction) {
  const char* op = "triplet_margin_loss";
  loss::check_reduction(op, reduction);
  KILN_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(), ShapeError, op, "negative",
             "All inputs should have same dimension but got ", anchor.dim(), "D, ", positive.dim(), "D and ",
             negative.dim(), "D inputs.");
  Tensor dist_pos = kiln::pairwise_distance(anchor, positive, p, eps);
  Tensor dist_neg = kiln::pairwise_distance(anchor, negative, p, eps);
  if (swap) dist_neg = kiln::minimum(dist_neg, kiln::pairwise_distance(positive, negative, p, eps));
  return loss::reduce(op, kiln::clamp(dist_pos - dist_neg + margin, 0.0), reduction);
}

}  // namespace kiln::composite
