#ifndef KILN_KERNELS_CPU_DEVICE_COPY_H_
#define KILN_KERNELS_CPU_DEVICE_COPY_H_
// The CPU's copy_ and fill_ (copy.cpp), which TensorBase::copy_ and fill_ reach through the CPU's
// hook table (device_hooks.cpp) after the device-independent checks (broadcastable source, no
// self-overlapping destination).
#include "kiln/scalar.h"
#include "kiln/tensor_base.h"

namespace kiln::cpu::detail {

// dst and src already checked, both on the CPU: same shape after broadcasting src, numel > 0.
void copy_(const TensorBase& dst, const TensorBase& src, bool non_blocking);
void fill_(const TensorBase& dst, const Scalar& value);

}  // namespace kiln::cpu::detail
#endif  // KILN_KERNELS_CPU_DEVICE_COPY_H_
