#ifndef KILN_KERNELS_COMMON_NLL_LOSS_CHECKS_H_
#define KILN_KERNELS_COMMON_NLL_LOSS_CHECKS_H_
// nll_loss's argument checks with PyTorch's messages, and the [N, C, S] layout both backends
// walk; shared by the CPU and CUDA kernels.
#include <algorithm>
#include "kiln/tensor.h"

namespace kiln::nll_loss_checks {

// self [C] (target 0-d), [N, C] (target [N]) or [N, C, d1, ...] (target [N, d1, ...]) seen as
// N batches of C classes at S spatial positions.
struct Layout {
  int64_t N, C, S;
};

inline void check_target_shape(const Tensor& self, const Tensor& target) {
  if (self.dim() == 1) {
    KILN_CHECK(target.dim() == 0, ShapeError, "nll_loss", "target", "size mismatch (got input: ",
               shape_str(self.sizes()), ", target: ", shape_str(target.sizes()), ")");
    return;
  }
  const int64_t batch = self.size(0);
  KILN_CHECK(target.dim() >= 1 && target.size(0) == batch, ShapeError, "nll_loss", "target",
             "Expected input batch_size (", batch, ") to match target batch_size (",
             target.dim() >= 1 ? target.size(0) : int64_t(0), ").");
  DimVector expected;
  expected.push_back(batch);
  for (int64_t i = 2; i < self.dim(); ++i) expected.push_back(self.size(i));
  KILN_CHECK(target.sizes().equals(expected), ShapeError, "nll_loss", "target", "Expected target size ",
             shape_str(expected), ", got ", shape_str(target.sizes()));
}

// Every check but the target values' range (the kernels check those as they read them).
inline Layout check_args(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  KILN_CHECK(self.dim() >= 1, ShapeError, "nll_loss", "self", "Expected 1 or more dimensions (got 0)");
  KILN_CHECK(reduction >= 0 && reduction <= 2, ValueError, "nll_loss", "reduction",
             "expected 0 (none), 1 (mean) or 2 (sum), got ", reduction);
  KILN_CHECK(is_floating(self.dtype()), DTypeError, "nll_loss", "self", "expected a floating point tensor, got ",
             dtype_name(self.dtype()));
  KILN_CHECK(target.dtype() == DType::Int64, DTypeError, "nll_loss", "target",
             "expected int64 class indices, got ", dtype_name(target.dtype()));
  check_target_shape(self, target);
  const int64_t C = self.dim() == 1 ? self.size(0) : self.size(1);
  if (weight.defined()) {
    KILN_CHECK(weight.dim() == 1 && weight.numel() == C, ShapeError, "nll_loss", "weight",
               "weight tensor should be defined either for all ", C,
               " classes or no classes but got weight tensor of shape: ", shape_str(weight.sizes()));
    KILN_CHECK(weight.dtype() == self.dtype(), DTypeError, "nll_loss", "weight", "expected weight to have dtype ",
               dtype_name(self.dtype()), ", got ", dtype_name(weight.dtype()));
  }
  const int64_t N = self.dim() == 1 ? 1 : self.size(0);
  const int64_t S = self.dim() <= 2 ? 1 : self.numel() / std::max<int64_t>(1, N * C);
  return {N, C, S};
}

}  // namespace kiln::nll_loss_checks
#endif  // KILN_KERNELS_COMMON_NLL_LOSS_CHECKS_H_
