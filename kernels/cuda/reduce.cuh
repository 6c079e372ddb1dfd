#ifndef KILN_KERNELS_CUDA_REDUCE_CUH_
#define KILN_KERNELS_CUDA_REDUCE_CUH_
// Row reductions on the GPU: `rows` rows of `len` contiguous elements, a group of threads per
// row (plan/reduce_plan.h), partials combined (plan/reduce_ops.h) by warp shuffles then shared
// memory; rows too long for the grid are split across blocks and finished by a second pass.
// Used by the reductions (reduce.cu) and softmax (softmax.cu).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include "kernels/cuda/plan/reduce_ops.h"
#include "kernels/cuda/plan/reduce_plan.h"
#include "runtime/src/cuda/cuda_context.h"
#include "kiln/kiln.h"

namespace kiln::cuda::reduce_detail {

using cuda_plan::acc_t;
using cuda_plan::ArgOp;
using cuda_plan::ArgPair;
using cuda_plan::LogicalOp;
using cuda_plan::MinMaxOp;
using cuda_plan::ProdOp;
using cuda_plan::SumOp;

template <typename V>
__device__ __forceinline__ V shuffle_down(V v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset);
}
__device__ __forceinline__ bool shuffle_down(bool v, int offset) {
  return __shfl_down_sync(0xffffffffu, int(v), offset) != 0;
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

// Reduces `vrows` = rows * splits virtual rows: virtual row g is chunk g % splits of row
// g / splits (chunk elements of a row of len). load(x, row, index in row) -> Acc;
// store(g, acc) writes the result of virtual row g.
template <typename In, typename Acc, typename Op, typename Load, typename Store>
__global__ void reduce_kernel(const In* in, int64_t vrows, int64_t len, int64_t splits, int64_t chunk, Op op,
                              Load load, Store store) {
  extern __shared__ unsigned char scratch_bytes[];
  Acc* scratch = reinterpret_cast<Acc*>(scratch_bytes);
  for (int64_t g0 = int64_t(blockIdx.x) * blockDim.y; g0 < vrows; g0 += int64_t(gridDim.x) * blockDim.y) {
    const int64_t g = g0 + threadIdx.y;
    Acc acc = op.init();
    if (g < vrows) {
      const int64_t row = g / splits, begin = (g % splits) * chunk;
      const int64_t n = cuda_plan::chunk_length(chunk, len, g % splits);
      const In* p = in + row * len + begin;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x) acc = op.combine(acc, load(p[i], row, begin + i));
    }
    acc = group_reduce(acc, op, scratch);
    if (g < vrows && threadIdx.x == 0) store(g, acc);
  }
}

// Loads of pass 2: the partials already are accumulators.
struct PartialLoad {
  template <typename Acc>
  __device__ Acc operator()(Acc a, int64_t, int64_t) const { return a; }
};
template <typename Acc>
struct PartialStore {
  Acc* partials;
  __device__ void operator()(int64_t g, Acc a) const { partials[g] = a; }
};

template <typename In, typename Acc, typename Op, typename Load, typename Store>
void launch_pass(const In* in, int64_t vrows, int64_t len, int64_t splits, int64_t chunk, const Op& op,
                 const Load& load, const Store& store, int device, const char* op_name) {
  // threads per row follow the chunk length, not the whole row
  const cuda_plan::ReduceShape s = cuda_plan::reduce_shape(vrows, chunk);
  const size_t shared = cuda_plan::reduce_shared_bytes(s, sizeof(Acc), false);
  reduce_kernel<In, Acc><<<unsigned(std::max<int64_t>(s.blocks, 1)),
                           dim3(unsigned(s.threads_per_row), unsigned(s.rows_per_block)), shared,
                           detail::current_cuda_stream(device)>>>(in, vrows, len, splits, chunk, op, load, store);
  KILN_CUDA_CHECK(cudaGetLastError(), op_name, "kernel launch");
}

// store(row, op-reduction of load(x) over the row) for every row of the dense [rows, len] `in`
// (on `device`, whose guard the caller holds); one pass, or two when rows are split.
template <typename Acc, typename In, typename Op, typename Load, typename Store>
void reduce_rows(const In* in, int64_t rows, int64_t len, const Op& op, const Load& load, const Store& store,
                 int device, const char* op_name) {
  if (rows == 0) return;
  const cuda_plan::RowSplit sp = cuda_plan::row_split(rows, len, detail::sm_count(device));
  if (sp.splits == 1) {
    launch_pass<In, Acc>(in, rows, len, 1, len, op, load, store, device, op_name);
    return;
  }
  Tensor buffer = empty({int64_t(rows * sp.splits * int64_t(sizeof(Acc)))}, TensorOptions(DType::UInt8, Device(DeviceType::CUDA, device)));
  Acc* partials = static_cast<Acc*>(buffer.data_ptr());
  launch_pass<In, Acc>(in, rows * sp.splits, len, sp.splits, sp.chunk, op, load, PartialStore<Acc>{partials}, device,
                       op_name);
  launch_pass<Acc, Acc>(partials, rows, sp.splits, 1, sp.splits, op, PartialLoad{}, store, device, op_name);
}

}  // namespace kiln::cuda::reduce_detail
#endif  // KILN_KERNELS_CUDA_REDUCE_CUH_
