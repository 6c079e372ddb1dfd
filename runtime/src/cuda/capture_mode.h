#ifndef KILN_RUNTIME_SRC_CUDA_CAPTURE_MODE_H_
#define KILN_RUNTIME_SRC_CUDA_CAPTURE_MODE_H_
// cudaMalloc and cudaHostAlloc are "potentially unsafe" calls that a Global- or ThreadLocal-mode
// capture forbids (the capture is invalidated). The allocators call them in a relaxed scope:
// the memory is not part of the graph and stays alive while the graph's pool does.
#include <cuda_runtime_api.h>

namespace kiln::cuda::detail {

class RelaxedCaptureScope {
 public:
  RelaxedCaptureScope() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureScope() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }  // the previous mode back
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace kiln::cuda::detail
#endif  // KILN_RUNTIME_SRC_CUDA_CAPTURE_MODE_H_
