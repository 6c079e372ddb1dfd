#ifndef KILN_CUDA_DEVICE_COPY_H_
#define KILN_CUDA_DEVICE_COPY_H_
// TensorBase::copy_ and fill_ hand tensors on a CUDA device to the CUDA backend (kernels/cuda/copy.cu)
// after the device-independent checks (broadcastable source, no self-overlapping destination).
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {

// dst and src already checked: same shape after broadcasting src, dst writable, numel > 0.
void copy_(const TensorBase& dst, const TensorBase& src, bool non_blocking);
void fill_(const TensorBase& dst, const Scalar& value);

}  // namespace kiln::cuda::detail
#endif  // KILN_CUDA_DEVICE_COPY_H_
