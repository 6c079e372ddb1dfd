#ifndef KILN_CUDA_DEVICE_COPY_H_
#define KILN_CUDA_DEVICE_COPY_H_
// Tensor::copy_ and fill_ hand tensors on a CUDA device to the CUDA backend (kernels/cuda/copy.cu)
// after the device-independent checks (broadcastable source, no self-overlapping destination).
#include "kiln/tensor.h"

namespace kiln::cuda::detail {

// dst and src already checked: same shape after broadcasting src, dst writable, numel > 0.
void copy_(Tensor& dst, const Tensor& src, bool non_blocking);
void fill_(Tensor& dst, const Scalar& value);

}  // namespace kiln::cuda::detail
#endif  // KILN_CUDA_DEVICE_COPY_H_
