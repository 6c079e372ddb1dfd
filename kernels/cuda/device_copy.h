#ifndef KILN_KERNELS_CUDA_DEVICE_COPY_H_
#define KILN_KERNELS_CUDA_DEVICE_COPY_H_
// The CUDA backend's copy_ and fill_ (copy.cu), which TensorBase::copy_ and fill_ reach through
// the registered hooks (device_hooks.cpp) after the device-independent checks (broadcastable
// source, no self-overlapping destination).
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {

// dst and src already checked: same shape after broadcasting src, dst writable, numel > 0.
void copy_(const TensorBase& dst, const TensorBase& src, bool non_blocking);
void fill_(const TensorBase& dst, const Scalar& value);

}  // namespace kiln::cuda::detail
#endif  // KILN_KERNELS_CUDA_DEVICE_COPY_H_
