#ifndef KILN_RUNTIME_INCLUDE_KILN_META_AMP_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_AMP_H_
// `_amp_update_scale_`'s own meta step (`meta: amp_update_scale`): PyTorch 1.13's checks and
// messages (aten/src/ATen/native/cuda/AmpKernels.cu, where self is called current_scale):
// self a 1-element float32 tensor, growth_tracker a 1-element int32 one, found_inf a 1-element
// float32 one, all on one device. The kernel then updates self and growth_tracker in place:
//   void kiln::<backend>::amp_update_scale(const meta::AmpUpdateScalePlan& plan, const TensorBase& self,
//       const TensorBase& growth_tracker, const TensorBase& found_inf, double scale_growth_factor,
//       double scale_backoff_factor, int64_t growth_interval)
#include <cstdint>
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct AmpUpdateScalePlan {
  Device device;  // of the three tensors
};

AmpUpdateScalePlan amp_update_scale(const char* op, const TensorBase& self, const TensorBase& growth_tracker,
                                    const TensorBase& found_inf, double scale_growth_factor,
                                    double scale_backoff_factor, int64_t growth_interval);

// "<label> must be a 1-element tensor." (ValueError), "<label> must be <kind> tensor." (DTypeError),
// naming `arg`: the checks PyTorch's amp and fused kernels make of their scalar tensors.
void check_one_element(const char* op, const char* arg, const char* label, const TensorBase& t, DType dtype,
                       const char* kind);
// "expected <arg> on <device> with <reference>, got <device>" (DeviceError).
void check_device_with(const char* op, const char* arg, const TensorBase& t, const char* reference, Device device);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_AMP_H_
