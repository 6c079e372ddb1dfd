#ifndef KILN_KERNELS_CUDA_REDUCE_CUH_
#define KILN_KERNELS_CUDA_REDUCE_CUH_
// Row reductions on the GPU: `rows` rows of `len` contiguous elements, a group of threads per
// row (plan/reduce_plan.h), partials combined (plan/reduce_ops.h) by warp shuffles then shared
// memory; rows too long for the grid are split across blocks and finished by a second pass.
// Reductions over leading dims of a dense tensor read it in place as columns instead.
// Used by the reductions (reduce.cu) and softmax (softmax.cu).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include "kiln/common/welford.h"
#include "plan/reduce_ops.h"
#include "plan/reduce_plan.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

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
template <typename R>
__device__ __forceinline__ complex<R> shuffle_down(complex<R> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.re, offset), __shfl_down_sync(0xffffffffu, v.im, offset)};
}
template <typename M>
__device__ __forceinline__ welford::State<M> shuffle_down(welford::State<M> v, int offset) {
  return {shuffle_down(v.mean, offset), __shfl_down_sync(0xffffffffu, v.m2, offset),
          __shfl_down_sync(0xffffffffu, v.n, offset)};
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
      // Four independent partials keep four loads in flight per thread (each one coalesced
      // across the warp); one partial alone waits on every load in turn.
      Acc a1 = op.init(), a2 = op.init(), a3 = op.init();
      const int64_t step = blockDim.x;
      int64_t i = threadIdx.x;
      for (; i + 3 * step < n; i += 4 * step) {
        const In x0 = p[i], x1 = p[i + step], x2 = p[i + 2 * step], x3 = p[i + 3 * step];
        acc = cuda_plan::fold(op, acc, load(x0, row, begin + i));
        a1 = cuda_plan::fold(op, a1, load(x1, row, begin + i + step));
        a2 = cuda_plan::fold(op, a2, load(x2, row, begin + i + 2 * step));
        a3 = cuda_plan::fold(op, a3, load(x3, row, begin + i + 3 * step));
      }
      for (; i < n; i += step) acc = cuda_plan::fold(op, acc, load(p[i], row, begin + i));
      acc = op.combine(op.combine(acc, a1), op.combine(a2, a3));
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
  // threads per row follow the chunk length, not the whole row; an accumulator wider than 8
  // bytes (arg max/min's value and index, Welford's triple) costs several shuffles per level of
  // the tree, so it gets a warp per row and more elements per thread (max dim=1 of [4096,4096]
  // on an H200: 37.6 us with 256 threads a row, 27.2 us with 32)
  const cuda_plan::ReduceShape s =
      cuda_plan::reduce_shape(vrows, chunk, sizeof(Acc) > 8 ? cuda_plan::kWideAccPerThread : 4);
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
  TensorBase buffer = kiln::detail::empty_dense({int64_t(rows * sp.splits * int64_t(sizeof(Acc)))},
                                                TensorOptions(DType::UInt8, Device(DeviceType::CUDA, device)));
  Acc* partials = static_cast<Acc*>(buffer.data_ptr());
  launch_pass<In, Acc>(in, rows * sp.splits, len, sp.splits, sp.chunk, op, load, PartialStore<Acc>{partials}, device,
                       op_name);
  launch_pass<Acc, Acc>(partials, rows, sp.splits, 1, sp.splits, op, PartialLoad{}, store, device, op_name);
}

// Column c < columns of the dense [outer, len, inner] `in` (cuda_plan::column_base), chunk
// blockIdx.y of `splits`: blockDim = (kColumnTile, kColumnSlices); store(c * splits + chunk, acc).
template <typename In, typename Acc, typename Op, typename Load, typename Store>
__global__ void reduce_columns_kernel(const In* in, int64_t columns, int64_t len, int64_t inner, int64_t splits,
                                      int64_t chunk, Op op, Load load, Store store) {
  extern __shared__ unsigned char scratch_bytes[];
  Acc* scratch = reinterpret_cast<Acc*>(scratch_bytes);  // [kColumnSlices][kColumnTile]
  const int64_t split = blockIdx.y, begin = split * chunk;
  const int64_t n = cuda_plan::chunk_length(chunk, len, split);
  for (int64_t tile = blockIdx.x; tile * cuda_plan::kColumnTile < columns; tile += gridDim.x) {
    const int64_t c = tile * cuda_plan::kColumnTile + threadIdx.x;
    Acc acc = op.init();
    if (c < columns) {
      const In* p = in + cuda_plan::column_base(c, len, inner) + begin * inner;
      Acc a1 = op.init(), a2 = op.init(), a3 = op.init();  // four loads in flight, as in reduce_kernel
      const int64_t step = blockDim.y;
      int64_t j = threadIdx.y;
      for (; j + 3 * step < n; j += 4 * step) {
        const In x0 = p[j * inner], x1 = p[(j + step) * inner], x2 = p[(j + 2 * step) * inner],
                 x3 = p[(j + 3 * step) * inner];
        acc = cuda_plan::fold(op, acc, load(x0, c, begin + j));
        a1 = cuda_plan::fold(op, a1, load(x1, c, begin + j + step));
        a2 = cuda_plan::fold(op, a2, load(x2, c, begin + j + 2 * step));
        a3 = cuda_plan::fold(op, a3, load(x3, c, begin + j + 3 * step));
      }
      for (; j < n; j += step) acc = cuda_plan::fold(op, acc, load(p[j * inner], c, begin + j));
      acc = op.combine(op.combine(acc, a1), op.combine(a2, a3));
    }
    scratch[threadIdx.y * blockDim.x + threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < columns) {
      for (unsigned k = 1; k < blockDim.y; ++k) acc = op.combine(acc, scratch[k * blockDim.x + threadIdx.x]);
      store(c * splits + split, acc);
    }
    __syncthreads();
  }
}

// store(c, reduction of column c) for the `columns` = outer * inner columns of the dense
// [outer, len, inner] `in`; one pass, or a second (the row kernel over each column's partials)
// when columns are split.
template <typename Acc, typename In, typename Op, typename Load, typename Store>
void reduce_columns(const In* in, int64_t columns, int64_t len, int64_t inner, const Op& op, const Load& load,
                    const Store& store, int device, const char* op_name) {
  if (columns == 0) return;
  const cuda_plan::ColumnShape s = cuda_plan::column_shape(columns, len, detail::sm_count(device));
  const dim3 grid(unsigned(std::max<int64_t>(s.tiles, 1)), unsigned(s.splits));
  const dim3 block(cuda_plan::kColumnTile, cuda_plan::kColumnSlices);
  const size_t shared = size_t(cuda_plan::kColumnTile) * cuda_plan::kColumnSlices * sizeof(Acc);
  cudaStream_t stream = detail::current_cuda_stream(device);
  if (s.splits == 1) {
    reduce_columns_kernel<In, Acc><<<grid, block, shared, stream>>>(in, columns, len, inner, 1, len, op, load, store);
    KILN_CUDA_CHECK(cudaGetLastError(), op_name, "kernel launch");
    return;
  }
  TensorBase buffer = kiln::detail::empty_dense({columns * s.splits * int64_t(sizeof(Acc))},
                                                TensorOptions(DType::UInt8, Device(DeviceType::CUDA, device)));
  Acc* partials = static_cast<Acc*>(buffer.data_ptr());
  reduce_columns_kernel<In, Acc><<<grid, block, shared, stream>>>(in, columns, len, inner, s.splits, s.chunk, op, load,
                                                                  PartialStore<Acc>{partials});
  KILN_CUDA_CHECK(cudaGetLastError(), op_name, "kernel launch");
  launch_pass<Acc, Acc>(partials, columns, s.splits, 1, s.splits, op, PartialLoad{}, store, device, op_name);
}

}  // namespace kiln::cuda::reduce_detail
#endif  // KILN_KERNELS_CUDA_REDUCE_CUH_
