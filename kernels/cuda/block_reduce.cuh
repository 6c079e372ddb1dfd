#ifndef KILN_KERNELS_CUDA_BLOCK_REDUCE_CUH_
#define KILN_KERNELS_CUDA_BLOCK_REDUCE_CUH_
// One value per thread of a 1-D block of kThreads threads, reduced to one value that every thread
// gets back: a tree of shuffles per warp, then each thread folds the warps' results itself, in
// warp order, so every thread (and every run) gets the same rounding. `shared` holds
// kThreads / 32 values; every thread of the block must call it.
// Used by the normalization kernels and the chunked attention's row softmax.
#include <cuda_runtime.h>

namespace kiln::cuda {

struct BlockPlus {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct BlockMax {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return max(a, b); }
};

template <int kThreads, typename T, typename Combine>
__device__ __forceinline__ T block_reduce(T v, T* shared, T identity, Combine combine) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads");
  for (int offset = 16; offset > 0; offset /= 2) v = combine(v, __shfl_down_sync(0xffffffffu, v, offset));
  __syncthreads();  // `shared` may still be read by the previous call
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  T total = identity;
  for (int w = 0; w < kThreads / 32; ++w) total = combine(total, shared[w]);
  return total;
}

template <int kThreads, typename T>
__device__ __forceinline__ T block_sum(T v, T* shared) {
  return block_reduce<kThreads>(v, shared, T(0), BlockPlus{});
}

}  // namespace kiln::cuda

#endif  // KILN_KERNELS_CUDA_BLOCK_REDUCE_CUH_
