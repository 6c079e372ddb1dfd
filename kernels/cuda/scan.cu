// cumsum and _cumsum_reverse (its gradient) on CUDA. The input, cast to the result dtype first
// as on the CPU, is viewed as [outer, D, inner] around dim.
// - inner == 1: a warp per row scans it 32 elements at a time, carrying the running total
//   (cub::WarpScan); rows of kLongRow elements or more get a block each (cub::BlockScan).
//   Long rows too few to occupy the SMs are cut into chunks (cuda_plan::row_split, as the
//   reductions) and scanned in three passes: chunk totals, each row's carries, then every
//   chunk from its carry. Fixed chunks and orders keep the result the same from run to run.
// - inner > 1: a thread per column walks down the dim; neighbouring threads read neighbouring
//   elements, so every step is one coalesced read.
// 16-bit floats accumulate in float32; integers in their own type (int64 unless dtype= says
// otherwise, as the CPU).
#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>
#include <algorithm>
#include "kernels/cpu/kernel_utils.h"
#include "kernels/cuda/plan/reduce_plan.h"
#include "kiln/gen/cuda_kernels.h"
#include "runtime/src/cuda/cuda_context.h"
#include "kiln/kiln.h"

namespace kiln::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kBlockThreads = 512;
constexpr int64_t kLongRow = 4096;

template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Element k of a row in scan order (the reverse scan walks from the end).
template <bool kReverse>
__device__ __forceinline__ int64_t scan_index(int64_t k, int64_t D) {
  return kReverse ? D - 1 - k : k;
}

// blockDim = (kWarp, kWarpsPerBlock): warp threadIdx.y scans rows blockIdx.x * kWarpsPerBlock + y, ...
template <typename T, bool kReverse>
__global__ void scan_rows_warp_kernel(const T* in, T* out, int64_t rows, int64_t D) {
  using Acc = scan_acc_t<T>;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage temp[kWarpsPerBlock];
  for (int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; row < rows;
       row += int64_t(gridDim.x) * blockDim.y) {  // uniform across the warp
    const T* x = in + row * D;
    T* y = out + row * D;
    Acc carry = Acc(0);
    for (int64_t base = 0; base < D; base += kWarp) {
      const int64_t k = base + threadIdx.x;
      const int64_t i = scan_index<kReverse>(k, D);
      Acc v = k < D ? Acc(x[i]) : Acc(0);
      Acc total;
      WarpScan(temp[threadIdx.y]).InclusiveSum(v, v, total);
      __syncwarp();
      if (k < D) y[i] = T(carry + v);
      carry = carry + total;
    }
  }
}

template <typename Acc>
using BlockScan = cub::BlockScan<Acc, kBlockThreads>;

// The whole block scans positions [begin, begin + len) of a row (in scan order) from `carry`,
// a tile of kBlockThreads at a time.
template <typename T, bool kReverse, typename Acc = scan_acc_t<T>>
__device__ void block_scan_range(const T* x, T* y, int64_t D, int64_t begin, int64_t len, Acc carry,
                                 typename BlockScan<Acc>::TempStorage& temp) {
  for (int64_t base = 0; base < len; base += kBlockThreads) {
    const int64_t k = base + threadIdx.x;
    const int64_t i = scan_index<kReverse>(begin + k, D);
    Acc v = k < len ? Acc(x[i]) : Acc(0);
    Acc total;
    BlockScan<Acc>(temp).InclusiveSum(v, v, total);
    __syncthreads();  // temp is reused by the next tile
    if (k < len) y[i] = T(carry + v);
    carry = carry + total;
  }
}

template <typename T, bool kReverse>
__global__ void scan_rows_block_kernel(const T* in, T* out, int64_t rows, int64_t D) {
  __shared__ typename BlockScan<scan_acc_t<T>>::TempStorage temp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    block_scan_range<T, kReverse>(in + row * D, out + row * D, D, 0, D, scan_acc_t<T>(0), temp);
}

template <typename T, bool kReverse>
__global__ void scan_columns_kernel(const T* in, T* out, int64_t columns, int64_t D, int64_t inner) {
  using Acc = scan_acc_t<T>;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = cuda_plan::column_base(c, D, inner);
    Acc acc = Acc(0);
    for (int64_t step = 0; step < D; ++step) {
      const int64_t at = base + scan_index<kReverse>(step, D) * inner;
      acc = acc + Acc(in[at]);
      out[at] = T(acc);
    }
  }
}

// Pass 1 of a split row: block (c, row) sums chunk c of the row, in scan order.
template <typename T, bool kReverse>
__global__ void chunk_totals_kernel(const T* in, scan_acc_t<T>* totals, int64_t D, int64_t chunk, int64_t splits) {
  using Acc = scan_acc_t<T>;
  using BlockReduce = cub::BlockReduce<Acc, kBlockThreads>;
  __shared__ typename BlockReduce::TempStorage temp;
  const int64_t row = blockIdx.y, c = blockIdx.x;
  const T* x = in + row * D;
  const int64_t begin = c * chunk, len = cuda_plan::chunk_length(chunk, D, c);
  Acc v = Acc(0);
  for (int64_t k = threadIdx.x; k < len; k += kBlockThreads) v = v + Acc(x[scan_index<kReverse>(begin + k, D)]);
  const Acc total = BlockReduce(temp).Sum(v);
  if (threadIdx.x == 0) totals[row * splits + c] = total;
}

// Pass 2: a thread per row turns its chunk totals into carries in place (exclusive sums).
template <typename Acc>
__global__ void chunk_carries_kernel(Acc* totals, int64_t rows, int64_t splits) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  Acc* t = totals + row * splits;
  Acc carry = Acc(0);
  for (int64_t c = 0; c < splits; ++c) {
    const Acc next = carry + t[c];
    t[c] = carry;
    carry = next;
  }
}

// Pass 3: block (c, row) scans chunk c from its carry.
template <typename T, bool kReverse>
__global__ void scan_chunks_kernel(const T* in, T* out, const scan_acc_t<T>* carries, int64_t D, int64_t chunk,
                                   int64_t splits) {
  __shared__ typename BlockScan<scan_acc_t<T>>::TempStorage temp;
  const int64_t row = blockIdx.y, c = blockIdx.x;
  block_scan_range<T, kReverse>(in + row * D, out + row * D, D, c * chunk, cuda_plan::chunk_length(chunk, D, c),
                                carries[row * splits + c], temp);
}

template <typename T, bool kReverse>
void scan_split_rows(const T* x, T* y, int64_t rows, int64_t D, const cuda_plan::RowSplit& sp, int dev,
                     cudaStream_t stream, const char* op) {
  using Acc = scan_acc_t<T>;
  Tensor scratch = empty({rows * sp.splits * int64_t(sizeof(Acc))}, TensorOptions(DType::UInt8, Device(DeviceType::CUDA, dev)));
  Acc* totals = static_cast<Acc*>(scratch.data_ptr());
  const dim3 grid(unsigned(sp.splits), unsigned(rows));
  chunk_totals_kernel<T, kReverse><<<grid, kBlockThreads, 0, stream>>>(x, totals, D, sp.chunk, sp.splits);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  chunk_carries_kernel<Acc><<<unsigned((rows + 127) / 128), 128, 0, stream>>>(totals, rows, sp.splits);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  scan_chunks_kernel<T, kReverse><<<grid, kBlockThreads, 0, stream>>>(x, y, totals, D, sp.chunk, sp.splits);
}

unsigned grid_for(int64_t work_items, int64_t per_block, int dev) {
  const int64_t blocks = (work_items + per_block - 1) / per_block;
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t(detail::sm_count(dev)) * 32)));
}

template <bool kReverse>
Tensor scan(const Tensor& self, int64_t dim, DType dt, const char* op) {
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd == 0 ? 1 : nd, op, "dim");
  detail::check_device(self.device().index, op);
  KILN_CHECK(dt != DType::Bool, DTypeError, op, "dtype", "bool results are not supported");
  Tensor in = cpu::dense(self, dt);
  Tensor out = empty(self.sizes(), TensorOptions(dt, self.device()));
  if (out.numel() == 0) return out;
  const cpu::DimSplit split = cpu::split_at_dim(self, d);
  const int64_t outer = split.outer, D = split.size, inner = split.inner;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = static_cast<const T*>(in.data_ptr());
      T* y = static_cast<T*>(out.data_ptr());
      if (inner > 1) {
        const int threads = 256;
        scan_columns_kernel<T, kReverse>
            <<<grid_for(outer * inner, threads, dev), threads, 0, stream>>>(x, y, outer * inner, D, inner);
      } else if (const cuda_plan::RowSplit sp = cuda_plan::row_split(outer, D, detail::sm_count(dev)); sp.splits > 1) {
        scan_split_rows<T, kReverse>(x, y, outer, D, sp, dev, stream, op);
      } else if (D >= kLongRow) {
        scan_rows_block_kernel<T, kReverse><<<grid_for(outer, 1, dev), kBlockThreads, 0, stream>>>(x, y, outer, D);
      } else {
        scan_rows_warp_kernel<T, kReverse><<<grid_for(outer, kWarpsPerBlock, dev), dim3(kWarp, kWarpsPerBlock), 0,
                                             stream>>>(x, y, outer, D);
      }
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan<false>(self, dim, cpu::sum_result_dtype(self.dtype(), dtype), "cumsum");
}

Tensor _cumsum_reverse(const Tensor& self, int64_t dim) {
  return scan<true>(self, dim, cpu::sum_result_dtype(self.dtype(), std::nullopt), "_cumsum_reverse");
}

}  // namespace kiln::cuda
