#ifndef KILN_RUNTIME_INCLUDE_KILN_META_NLL_LOSS_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_NLL_LOSS_H_
// nll_loss's own meta step (`meta: nll_loss`): PyTorch's argument checks and messages, the
// result's shape, and the [N, C, S] layout both backends walk. The kernels check the target
// values' range as they read them (before anything is written to a caller's out=).
//   void kiln::<backend>::nll_loss(const meta::NllLossPlan& plan, const TensorBase& out, const TensorBase& self,
//                                  const TensorBase& target, const TensorBase& weight, int64_t reduction,
//                                  int64_t ignore_index)
// self, target and weight (when defined) are contiguous.
#include "kiln/tensor_base.h"

namespace kiln::meta {

// self [C] (target 0-d), [N, C] (target [N]) or [N, C, d1, ...] (target [N, d1, ...]) seen as
// N batches of C classes at S spatial positions.
struct NllLossPlan {
  int64_t N = 1, C = 1, S = 1;
  DimVector sizes;  // of the result: target's (reduction none) or [] (mean, sum)
  DType dtype = DType::Float32;
};

NllLossPlan nll_loss(const char* op, const TensorBase& self, const TensorBase& target, const TensorBase& weight,
                     int64_t reduction, int64_t ignore_index);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_NLL_LOSS_H_
