#ifndef KILN_RUNTIME_SRC_COMPOSITE_LOSS_SUPPORT_H_
#define KILN_RUNTIME_SRC_COMPOSITE_LOSS_SUPPORT_H_
// What the loss composites share: PyTorch's reduction (0 none, 1 mean, 2 sum) and the shape
// checks, each naming the loss that failed.
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/sum.h"

namespace kiln::composite::loss {

// Checked before any work, so a bad reduction fails the same way whatever the inputs.
inline void check_reduction(const char* op, int64_t reduction) {
  KILN_CHECK(reduction >= 0 && reduction <= 2, ValueError, op, "reduction",
             "expected 0 (none), 1 (mean) or 2 (sum), got ", reduction);
}

// PyTorch's apply_loss_reduction.
inline Tensor reduce(const char* op, const Tensor& loss, int64_t reduction) {
  check_reduction(op, reduction);
  if (reduction == 1) return kiln::mean(loss);
  if (reduction == 2) return kiln::sum(loss);
  return loss;
}

// The losses that broadcast their operands (l1_loss, kl_div ...) fail here, naming the argument.
inline void check_broadcast(const char* op, const char* arg, const Tensor& a, const Tensor& b) {
  (void)pointwise::broadcast_shapes(a.sizes(), b.sizes(), op, arg);
}

inline std::string torch_size(IntArrayRef sizes) { return "torch.Size(" + shape_str(sizes) + ")"; }

}  // namespace kiln::composite::loss
#endif  // KILN_RUNTIME_SRC_COMPOSITE_LOSS_SUPPORT_H_
