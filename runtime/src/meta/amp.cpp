// _amp_update_scale_'s meta step and the scalar-tensor checks of the amp and foreach ops
// (see kiln/meta/amp.h).
#include "kiln/meta/amp.h"

namespace kiln::meta {

void check_one_element(const char* op, const char* arg, const char* label, const TensorBase& t, DType dtype,
                       const char* kind) {
  KILN_CHECK(t.defined(), ValueError, op, arg, label, " is undefined");
  KILN_CHECK(t.numel() == 1, ValueError, op, arg, label, " must be a 1-element tensor.");
  KILN_CHECK(t.dtype() == dtype, DTypeError, op, arg, label, " must be ", kind, " tensor.");
}

void check_device_with(const char* op, const char* arg, const TensorBase& t, const char* reference, Device device) {
  KILN_CHECK(t.device() == device, DeviceError, op, arg, "expected ", arg, " on ", device.str(), " with ", reference,
             ", got ", t.device().str());
}

AmpUpdateScalePlan amp_update_scale(const char* op, const TensorBase& self, const TensorBase& growth_tracker,
                                    const TensorBase& found_inf, double /*scale_growth_factor*/,
                                    double /*scale_backoff_factor*/, int64_t /*growth_interval*/) {
  check_one_element(op, "growth_tracker", "growth_tracker", growth_tracker, DType::Int32, "an int");
  check_one_element(op, "self", "current_scale", self, DType::Float32, "a float");
  check_one_element(op, "found_inf", "found_inf", found_inf, DType::Float32, "a float");
  AmpUpdateScalePlan plan;
  plan.device = found_inf.device();
  check_device_with(op, "self", self, "found_inf", plan.device);
  check_device_with(op, "growth_tracker", growth_tracker, "found_inf", plan.device);
  return plan;
}

}  // namespace kiln::meta
