// nll_loss on CPU: self [C] (target 0-d), [N, C] (target [N]) or [N, C, d1, ...]
// (target [N, d1, ...]); reduction 0 none, 1 mean (divided by the total weight of the
// non-ignored targets, NaN when that is 0, as PyTorch), 2 sum.
#include "kiln/gen/cpu_kernels.h"
#include "kernels/common/nll_loss_checks.h"
#include "kernels/cpu/kernel_utils.h"

namespace kiln::cpu {

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  const nll_loss_checks::Layout layout = nll_loss_checks::check_args(self, target, weight, reduction);
  const int64_t N = layout.N, C = layout.C, S = layout.S;
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
