// Regression losses over |self - target|: l1_loss, smooth_l1_loss, huber_loss. They broadcast
// target against self, as PyTorch's ops do (its Python wrappers only warn).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/huber_loss.h"
#include "kiln/gen/api/l1_loss.h"
#include "kiln/gen/api/smooth_l1_loss.h"
#include "kiln/gen/api/sub.h"
#include "kiln/gen/api/where.h"
#include "loss_support.h"

namespace kiln::composite {

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  loss::check_reduction("l1_loss", reduction);
  loss::check_broadcast("l1_loss", "target", self, target);
  return loss::reduce("l1_loss", kiln::abs(kiln::sub(self, target)), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  loss::check_reduction("smooth_l1_loss", reduction);
  KILN_CHECK(beta >= 0, ValueError, "smooth_l1_loss", "beta",
             "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0.0) return kiln::l1_loss(self, target, reduction);  // the quadratic part vanishes (PyTorch too)
  loss::check_broadcast("smooth_l1_loss", "target", self, target);
  Tensor z = kiln::abs(kiln::sub(self, target));
  Tensor elementwise = kiln::where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta);
  return loss::reduce("smooth_l1_loss", elementwise, reduction);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  loss::check_reduction("huber_loss", reduction);
  KILN_CHECK(delta > 0, ValueError, "huber_loss", "delta",
             "huber_loss does not support non-positive values for delta.");
  loss::check_broadcast("huber_loss", "target", self, target);
  Tensor z = kiln::abs(kiln::sub(self, target));
  Tensor elementwise = kiln::where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta);
  return loss::reduce("huber_loss", elementwise, reduction);
}

}  // namespace kiln::composite
