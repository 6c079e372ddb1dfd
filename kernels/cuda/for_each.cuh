#ifndef KILN_KERNELS_CUDA_FOR_EACH_CUH_
#define KILN_KERNELS_CUDA_FOR_EACH_CUH_
// f(i) for every i in [0, n): a grid-stride loop of 256-thread blocks, at most 16 per SM. The
// launcher the indexing and mask kernels share (their work is one functor call per place).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include "kiln/cuda/context.h"

namespace kiln::cuda {

template <typename F>
__global__ void for_each_kernel(int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) f(i);
}

template <typename F>
void for_each(int64_t n, const F& f, int device, cudaStream_t stream, const char* op) {
  if (n <= 0) return;
  const int threads = 256;
  const int64_t blocks =
      std::max<int64_t>(1, std::min<int64_t>((n + threads - 1) / threads, int64_t(detail::sm_count(device)) * 16));
  for_each_kernel<<<unsigned(blocks), threads, 0, stream>>>(n, f);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_FOR_EACH_CUH_
