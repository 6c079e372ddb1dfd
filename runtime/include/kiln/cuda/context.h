#ifndef KILN_RUNTIME_INCLUDE_KILN_CUDA_CONTEXT_H_
#define KILN_RUNTIME_INCLUDE_KILN_CUDA_CONTEXT_H_
// What kernels and library calls of the CUDA backend need from the runtime: error checks that
// raise kiln::Error naming the op, the current stream, the device's SM count.
// Part of the kernel-facing API; included by .cpp (g++) and .cu (nvcc) files of the CUDA build only.
#include <cuda_runtime_api.h>
#include "kiln/cuda_device.h"
#include "kiln/error.h"
#include "kiln/cuda/check.h"

namespace kiln::cuda::detail {

// Raises DeviceError naming `op` when there is no usable device (or `index` is out of range).
void check_device(int index, const char* op);
cudaStream_t current_cuda_stream(int device);
int sm_count(int device);  // cached per device
Allocator* device_allocator();  // the caching allocator of every CUDA device (device_allocator.cpp)

}  // namespace kiln::cuda::detail

#endif  // KILN_RUNTIME_INCLUDE_KILN_CUDA_CONTEXT_H_
