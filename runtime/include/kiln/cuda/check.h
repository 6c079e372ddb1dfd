#ifndef KILN_RUNTIME_INCLUDE_KILN_CUDA_CHECK_H_
#define KILN_RUNTIME_INCLUDE_KILN_CUDA_CHECK_H_
// KILN_CUDA_CHECK: a failed CUDA runtime call raises kiln::DeviceError naming the op. Only the
// CUDA runtime API header, so kernel files can check their launches without tensor.h.
#include <cuda_runtime_api.h>

namespace kiln::cuda::detail {

// DeviceError "<op>: <arg>: CUDA error <name> (<string>) in <what>".
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* op, const char* arg, const char* what);

}  // namespace kiln::cuda::detail

#define KILN_CUDA_CHECK(expr, op, arg)                                                    \
  do {                                                                                    \
    cudaError_t kiln_cuda_err_ = (expr);                                                  \
    if (kiln_cuda_err_ != cudaSuccess)                                                    \
      ::kiln::cuda::detail::throw_cuda_error(kiln_cuda_err_, (op), (arg), #expr);         \
  } while (0)

#endif  // KILN_RUNTIME_INCLUDE_KILN_CUDA_CHECK_H_
