// The two ops GradScaler runs, with PyTorch 1.13's semantics (its CUDA kernels
// aten/src/ATen/native/cuda/AmpKernels.cu: PyTorch 1.13 has no CPU ones) and messages. Both are
// built from kiln ops, so they run on the tensors' device and never read a value back to the
// host: found_inf and the scale stay device-side until GradScaler::step asks once per step.
#include <string>
#include "kiln/amp.h"
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/isfinite.h"
#include "kiln/gen/api/logical_not.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/eq.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/ne.h"
#include "kiln/gen/api/where.h"

namespace kiln {
namespace {

void check_one_element(const char* op, const char* arg, const char* label, const Tensor& t, DType dtype,
                       const char* kind) {
  KILN_CHECK(t.defined(), ValueError, op, arg, label, " is undefined");
  KILN_CHECK(t.numel() == 1, ValueError, op, arg, label, " must be a 1-element tensor.");
  KILN_CHECK(t.dtype() == dtype, DTypeError, op, arg, label, " must be ", kind, " tensor.");
}

void check_device(const char* op, const char* arg, const Tensor& t, const Tensor& found_inf) {
  KILN_CHECK(t.device() == found_inf.device(), DeviceError, op, arg, "expected ", arg, " on ", found_inf.device().str(),
             " with found_inf, got ", t.device().str());
}

// value * factor as the CUDA kernel computes it: in double, rounded to float32 once.
Tensor scaled(const Tensor& value, double factor) { return (value.to(kFloat64) * factor).to(kFloat32); }

}  // namespace

void _amp_foreach_non_finite_check_and_unscale_(const TensorList& self, Tensor& found_inf, const Tensor& inv_scale) {
  constexpr const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_one_element(op, "inv_scale", "inv_scale", inv_scale, kFloat32, "a float");
  check_one_element(op, "found_inf", "found_inf", found_inf, kFloat32, "a float");
  check_device(op, "inv_scale", inv_scale, found_inf);
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& g = self[i];
    KILN_CHECK(g.defined(), ValueError, op, "self", "element ", i, " is undefined");
    check_device(op, "self", g, found_inf);
    KILN_CHECK(is_floating(g.dtype()), DTypeError, op, "self", "element ", i, " is ", dtype_name(g.dtype()),
               "; gradients to unscale are floating");
  }
  NoGradGuard no_grad;
  const Tensor inv = inv_scale.reshape({});  // 0-d, so a 0-d gradient keeps its shape
  const Tensor one = ones_like(found_inf);
  for (const Tensor& g : self) {
    // found_inf = 1 where this tensor holds an inf or NaN, else as it was
    found_inf.copy_(where(logical_not(all(isfinite(g))), one, found_inf));
    Tensor target = g;
    if (g.dtype() == kFloat32 || g.dtype() == kFloat64) {
      target.mul_(inv);  // in the gradient's dtype, inv widened (the kernel's opmath)
    } else {
      target.copy_(mul(g.to(kFloat32), inv));  // float16/bfloat16: in float32, rounded once
    }
  }
}

Tensor& _amp_update_scale_(Tensor& self, Tensor& growth_tracker, const Tensor& found_inf, double scale_growth_factor,
                           double scale_backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "_amp_update_scale_";
  check_one_element(op, "growth_tracker", "growth_tracker", growth_tracker, kInt32, "an int");
  check_one_element(op, "self", "current_scale", self, kFloat32, "a float");
  check_one_element(op, "found_inf", "found_inf", found_inf, kFloat32, "a float");
  check_device(op, "self", self, found_inf);
  check_device(op, "growth_tracker", growth_tracker, found_inf);
  NoGradGuard no_grad;
  const Tensor found = ne(found_inf, 0);
  const Tensor successful = growth_tracker + 1;
  const Tensor at_interval = eq(successful, growth_interval);
  const Tensor grown = scaled(self, scale_growth_factor);
  const Tensor kept = where(isfinite(grown), grown, self);  // never grow past float32 into inf
  const Tensor new_scale = where(found, scaled(self, scale_backoff_factor), where(at_interval, kept, self));
  const Tensor new_tracker = where(logical_or(found, at_interval), zeros_like(growth_tracker), successful);
  self.copy_(new_scale);
  growth_tracker.copy_(new_tracker);
  return self;
}

}  // namespace kiln
