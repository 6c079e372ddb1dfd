// nll_loss on CPU: self [C] (target 0-d), [N, C] (target [N]) or [N, C, d1, ...]
// (target [N, d1, ...]); reduction 0 none, 1 mean (divided by the total weight of the
// non-ignored targets, NaN when that is 0, as PyTorch), 2 sum.
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/kernel_utils.h"

namespace kiln::cpu {
namespace {

void check_target_shape(const Tensor& self, const Tensor& target) {
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

}  // namespace

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  KILN_CHECK(self.dim() >= 1, ShapeError, "nll_loss", "self", "Expected 1 or more dimensions (got 0)");
  KILN_CHECK(reduction >= 0 && reduction <= 2, ValueError, "nll_loss", "reduction",
             "expected 0 (none), 1 (mean) or 2 (sum), got ", reduction);
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
  // Layout [N, C, S]: N batches, C classes, S spatial positions (1 for 1-D/2-D inputs).
  const int64_t N = self.dim() == 1 ? 1 : self.size(0);
  const int64_t S = self.dim() <= 2 ? 1 : self.numel() / std::max<int64_t>(1, N * C);
  Tensor x = dense(self), t = dense(target), w = weight.defined() ? dense(weight) : Tensor();
  Tensor out = reduction == 0 ? empty(target.sizes(), TensorOptions(self.dtype()))
                              : empty({}, TensorOptions(self.dtype()));
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_floating(dtype_of<T>)) {
      KILN_FAIL(DTypeError, "nll_loss", "self", "expected a floating point tensor, got ", dtype_name(self.dtype()));
    } else {
      using Acc = double;
      const T* xp = static_cast<const T*>(x.data_ptr());
      const int64_t* tp = static_cast<const int64_t*>(t.data_ptr());
      const T* wp = w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr;
      T* op = static_cast<T*>(out.data_ptr());
      Acc total = 0, total_weight = 0;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t cls = tp[n * S + s];
          Acc loss = 0;
          if (cls != ignore_index) {
            KILN_CHECK(cls >= 0 && cls < C, IndexError, "nll_loss", "target", "Target ", cls, " is out of bounds.");
            const Acc wv = wp ? Acc(opmath_t<T>(wp[cls])) : Acc(1);
            loss = -wv * Acc(opmath_t<T>(xp[(n * C + cls) * S + s]));
            total_weight += wv;
          }
          if (reduction == 0) op[n * S + s] = T(loss);
          else total += loss;
        }
      }
      if (reduction == 1) op[0] = T(total / total_weight);
      else if (reduction == 2) op[0] = T(total);
    }
  });
  return out;
}

}  // namespace kiln::cpu
