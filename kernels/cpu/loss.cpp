// nll_loss on CPU: self [C] (target 0-d), [N, C] (target [N]) or [N, C, d1, ...]
// (target [N, d1, ...]); reduction 0 none, 1 mean (divided by the total weight of the
// non-ignored targets, NaN when that is 0, as PyTorch), 2 sum.
// The meta step (kiln/meta/nll_loss.h) has checked the arguments and laid out [N, C, S].
#include "kiln/gen/kernels/cpu/nll_loss.h"

namespace kiln::cpu {

void nll_loss(const meta::NllLossPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& target,
              const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  const int64_t N = plan.N, C = plan.C, S = plan.S;
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the meta step admits floating dtypes only
      using Acc = double;
      const T* xp = static_cast<const T*>(self.data_ptr());
      const int64_t* tp = static_cast<const int64_t*>(target.data_ptr());
      const T* wp = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
      T* op = static_cast<T*>(out.data_ptr());
      // Every target is checked before anything is written (out= may be the caller's tensor).
      for (int64_t i = 0; i < N * S; ++i)
        KILN_CHECK(tp[i] == ignore_index || (tp[i] >= 0 && tp[i] < C), IndexError, "nll_loss", "target", "Target ",
                   tp[i], " is out of bounds.");
      Acc total = 0, total_weight = 0;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t cls = tp[n * S + s];
          Acc loss = 0;
          if (cls != ignore_index) {
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
}

}  // namespace kiln::cpu
