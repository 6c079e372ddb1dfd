#ifndef KILN_KERNELS_CUDA_REDUCE_CUH_
#define KILN_KERNELS_CUDA_REDUCE_CUH_
// Row reductions on the GPU: `rows` rows of `len` contiguous elements, a group of threads per
// row (plan/reduce_plan.h), partials combined (plan/reduce_ops.h) by warp shuffles then shared
// memory. Used by the reductions (reduce.cu) and softmax (softmax.cu).
#include <cuda_runtime.h>
#include <cstdint>
#include "kernels/cuda/plan/reduce_ops.h"
#include "kernels/cuda/plan/reduce_plan.h"

namespace kiln::cuda::reduce_detail {

using cuda_plan::acc_t;
using cuda_plan::ArgOp;
using cuda_plan::ArgPair;
using cuda_plan::MinMaxOp;
using cuda_plan::SumOp;

template <typename V>
__device__ __forceinline__ V shuffle_down(V v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset);
}
template <typename Acc>
__device__ __forceinline__ ArgPair<Acc> shuffle_down(ArgPair<Acc> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.value, offset), __shfl_down_sync(0xffffffffu, v.index, offset)};
}

// Combines the values of one row group (blockDim.x threads of row threadIdx.y); the result is
// valid in the group's lane 0. `scratch` holds one V per warp per row group. Every thread of the
// block must call it (it synchronizes the block).
template <typename V, typename Op>
__device__ V group_reduce(V v, const Op& op, V* scratch) {
  for (int offset = cuda_plan::kWarp / 2; offset > 0; offset /= 2) v = op.combine(v, shuffle_down(v, offset));
  const int warps = blockDim.x / cuda_plan::kWarp;
  if (warps > 1) {
    const int warp = threadIdx.x / cuda_plan::kWarp, lane = threadIdx.x % cuda_plan::kWarp;
    V* mine = scratch + threadIdx.y * warps;
    if (lane == 0) mine[warp] = v;
    __syncthreads();
    v = threadIdx.x < warps ? mine[threadIdx.x] : op.init();
    if (warp == 0)
      for (int offset = cuda_plan::kWarp / 2; offset > 0; offset /= 2) v = op.combine(v, shuffle_down(v, offset));
    __syncthreads();
  }
  return v;
}

}  // namespace kiln::cuda::reduce_detail
#endif  // KILN_KERNELS_CUDA_REDUCE_CUH_
