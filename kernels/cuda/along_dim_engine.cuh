#ifndef KILN_KERNELS_CUDA_ALONG_DIM_ENGINE_CUH_
#define KILN_KERNELS_CUDA_ALONG_DIM_ENGINE_CUH_
// The CUDA along_dim engine: runs a rule (kiln/common/along_dim_rules.h, the CPU's too) over
// every line of [outer, D, inner] along plan.dim. A thread per line walks it in order, so a
// scatter is deterministic without atomics. An index out of range is not followed; outside a
// graph capture it raises IndexError naming it (one 16-byte read-back, as nll_loss).
#include <cuda_runtime.h>
#include <algorithm>
#include "kiln/common/along_dim_rules.h"
#include "kiln/cuda/context.h"
#include "kiln/meta/along_dim.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace along_dim_engine {

template <typename Rule, typename T>
__global__ void lines_kernel(const T* x, T* y, const int64_t* idx, int64_t lines, int64_t D, int64_t inner,
                             int64_t* bad) {
  for (int64_t line = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; line < lines;
       line += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = (line / inner) * D * inner + line % inner;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t at = base + j * inner, k = idx[at];
      if (k < 0 || k >= D) {
        bad[1] = k;
        bad[0] = 1;
        continue;
      }
      Rule::apply(y, x, at, base + k * inner);
    }
  }
}

}  // namespace along_dim_engine

template <template <typename> class Rule>
void along_lines(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self,
                 const TensorBase& indices, const char* op) {
  const int dev = self.device().index;
  detail::check_device(dev, op);
  const int64_t outer = plan.split.outer, D = plan.split.size, inner = plan.split.inner;
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const int64_t lines = outer * inner;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((lines + threads - 1) / threads, int64_t(detail::sm_count(dev)) * 8);
  TensorBase bad;  // [flag, the bad index]
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Rule<T>::kZeroFirst)
      KILN_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, out.nbytes(), stream), op, "out");
    if (out.numel() == 0) return;
    bad = kiln::detail::empty_dense({2}, TensorOptions(DType::Int64, self.device()));
    KILN_CUDA_CHECK(cudaMemsetAsync(bad.data_ptr(), 0, 2 * sizeof(int64_t), stream), op, "indices");
    along_dim_engine::lines_kernel<Rule<T>, T><<<unsigned(std::max<int64_t>(blocks, 1)), threads, 0, stream>>>(
        static_cast<const T*>(self.data_ptr()), static_cast<T*>(out.data_ptr()),
        static_cast<const int64_t*>(indices.data_ptr()), lines, D, inner, static_cast<int64_t*>(bad.data_ptr()));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
  if (out.numel() == 0) return;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing), op, "indices");
  if (capturing == cudaStreamCaptureStatusNone) {
    int64_t host_bad[2] = {0, 0};
    KILN_CUDA_CHECK(cudaMemcpyAsync(host_bad, bad.data_ptr(), sizeof(host_bad), cudaMemcpyDeviceToHost, stream), op,
                    "indices");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream), op, "indices");
    KILN_CHECK(host_bad[0] == 0, IndexError, op, "indices", "index ", host_bad[1], " is out of bounds for dim ",
               plan.dim, " with size ", D);
  }
}

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_ALONG_DIM_ENGINE_CUH_
