// nll_loss's meta step (see kiln/meta/nll_loss.h).
#include "kiln/meta/nll_loss.h"
#include <algorithm>

namespace kiln::meta {
namespace {

void check_target_shape(const char* op, const TensorBase& self, const TensorBase& target) {
  if (self.dim() == 1) {
    KILN_CHECK(target.dim() == 0, ShapeError, op, "target", "size mismatch (got input: ", shape_str(self.sizes()),
               ", target: ", shape_str(target.sizes()), ")");
    return;
  }
  const int64_t batch = self.size(0);
  KILN_CHECK(target.dim() >= 1 && target.size(0) == batch, ShapeError, op, "target", "Expected input batch_size (",
             batch, ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : int64_t(0), ").");
  DimVector expected;
  expected.push_back(batch);
  for (int64_t i = 2; i < self.dim(); ++i) expected.push_back(self.size(i));
  KILN_CHECK(target.sizes().equals(expected), ShapeError, op, "target", "Expected target size ", shape_str(expected),
             ", got ", shape_str(target.sizes()));
}

}  // namespace

NllLossPlan nll_loss(const char* op, const TensorBase& self, const TensorBase& target, const TensorBase& weight,
                     int64_t reduction, int64_t /*ignore_index: any value may be ignored*/) {
  KILN_CHECK(self.dim() >= 1, ShapeError, op, "self", "Expected 1 or more dimensions (got 0)");
  KILN_CHECK(reduction >= 0 && reduction <= 2, ValueError, op, "reduction", "expected 0 (none), 1 (mean) or 2 (sum), got ",
             reduction);
  KILN_CHECK(is_floating(self.dtype()), DTypeError, op, "self", "expected a floating point tensor, got ",
             dtype_name(self.dtype()));
  KILN_CHECK(target.dtype() == DType::Int64, DTypeError, op, "target", "expected int64 class indices, got ",
             dtype_name(target.dtype()));
  check_target_shape(op, self, target);
  NllLossPlan plan;
  plan.C = self.dim() == 1 ? self.size(0) : self.size(1);
  if (weight.defined()) {
    KILN_CHECK(weight.dim() == 1 && weight.numel() == plan.C, ShapeError, op, "weight",
               "weight tensor should be defined either for all ", plan.C,
               " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
    KILN_CHECK(weight.dtype() == self.dtype(), DTypeError, op, "weight", "expected weight to have dtype ",
               dtype_name(self.dtype()), ", got ", dtype_name(weight.dtype()));
  }
  plan.N = self.dim() == 1 ? 1 : self.size(0);
  plan.S = self.dim() <= 2 ? 1 : self.numel() / std::max<int64_t>(1, plan.N * plan.C);
  if (reduction == 0) plan.sizes = target.sizes();
  plan.dtype = self.dtype();
  return plan;
}

}  // namespace kiln::meta
