#ifndef KILN_KERNELS_CUDA_SCAN_ENGINE_CUH_
#define KILN_KERNELS_CUDA_SCAN_ENGINE_CUH_
// The CUDA scan engine: runs a combine rule (kiln/common/scan_rules.h, the CPU's too) along
// plan.dim of a contiguous input, [outer, D, inner] as the meta step split it.
// - inner == 1: a warp per row scans it 32 elements at a time, carrying the running value
//   (cub::WarpScan); rows of kLongRow elements or more get a block each (cub::BlockScan).
//   Long rows too few to occupy the SMs are cut into chunks (cuda_plan::row_split, as the
//   reductions) and scanned in three passes: chunk totals, each row's carries, then every
//   chunk from its carry. Elements are combined in scan order throughout (rules need not
//   commute), and fixed chunks keep the result the same from run to run.
// - inner > 1: a thread per column walks down the dim; neighbouring threads read neighbouring
//   elements, so every step is one coalesced read.
#include <cuda_runtime.h>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>
#include <algorithm>
#include "kiln/common/scan_rules.h"
#include "plan/reduce_plan.h"
#include "kiln/meta/along_dim.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace scan_engine {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kBlockThreads = 512;
constexpr int64_t kLongRow = 4096;

// Where a scan's running values go: the value (StoreValue), also the index (StoreValueIndex:
// cummax, cummin), or nowhere (NoStore: the chunk totals pass).
template <typename T, typename Rule>
struct StoreValue {
  T* out;
  __device__ void operator()(int64_t at, const typename Rule::Acc& a) const { out[at] = T(Rule::value(a)); }
};
template <typename T, typename Rule>
struct StoreValueIndex {
  T* out;
  int64_t* indices;
  __device__ void operator()(int64_t at, const typename Rule::Acc& a) const {
    out[at] = T(Rule::value(a));
    indices[at] = Rule::index(a);
  }
};
struct NoStore {
  template <typename Acc>
  __device__ void operator()(int64_t, const Acc&) const {}
};

// Rule::combine as the functor cub's scans take.
template <typename Rule>
struct Combine {
  __device__ __forceinline__ typename Rule::Acc operator()(const typename Rule::Acc& a, const typename Rule::Acc& b) const {
    return Rule::combine(a, b);
  }
};

// Element k of a row in scan order (the reverse scan walks from the end).
template <bool kReverse>
__device__ __forceinline__ int64_t scan_index(int64_t k, int64_t D) {
  return kReverse ? D - 1 - k : k;
}

// blockDim = (kWarp, kWarpsPerBlock): warp threadIdx.y scans rows blockIdx.x * kWarpsPerBlock + y, ...
template <typename Rule, bool kReverse, typename T, typename Store>
__global__ void scan_rows_warp_kernel(const T* in, Store store, int64_t rows, int64_t D) {
  using Acc = typename Rule::Acc;
  using WarpScan = cub::WarpScan<Acc>;
  __shared__ typename WarpScan::TempStorage temp[kWarpsPerBlock];
  for (int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; row < rows;
       row += int64_t(gridDim.x) * blockDim.y) {  // uniform across the warp
    const T* x = in + row * D;
    Acc carry = Rule::identity();
    for (int64_t base = 0; base < D; base += kWarp) {
      const int64_t k = base + threadIdx.x;
      const int64_t i = scan_index<kReverse>(k, D);
      Acc v = k < D ? Rule::load(x[i], i) : Rule::identity();
      Acc total;
      WarpScan(temp[threadIdx.y]).InclusiveScan(v, v, Combine<Rule>(), total);
      __syncwarp();
      if (k < D) store(row * D + i, Rule::combine(carry, v));
      carry = Rule::combine(carry, total);
    }
  }
}

template <typename Acc>
using BlockScan = cub::BlockScan<Acc, kBlockThreads>;

// The whole block scans positions [begin, begin + len) of row `row` (in scan order) from
// `carry`, a tile of kBlockThreads at a time, and returns the carry after them. With kStore
// false it only computes that carry (the chunk totals of a split row).
template <typename Rule, bool kReverse, bool kStore, typename T, typename Store, typename Acc = typename Rule::Acc>
__device__ Acc block_scan_range(const T* in, const Store& store, int64_t row, int64_t D, int64_t begin, int64_t len,
                                Acc carry, typename BlockScan<Acc>::TempStorage& temp) {
  const T* x = in + row * D;
  for (int64_t base = 0; base < len; base += kBlockThreads) {
    const int64_t k = base + threadIdx.x;
    const int64_t i = scan_index<kReverse>(begin + k, D);
    Acc v = k < len ? Rule::load(x[i], i) : Rule::identity();
    Acc total;
    BlockScan<Acc>(temp).InclusiveScan(v, v, Combine<Rule>(), total);
    __syncthreads();  // temp is reused by the next tile
    if (kStore && k < len) store(row * D + i, Rule::combine(carry, v));
    carry = Rule::combine(carry, total);
  }
  return carry;
}

template <typename Rule, bool kReverse, typename T, typename Store>
__global__ void scan_rows_block_kernel(const T* in, Store store, int64_t rows, int64_t D) {
  __shared__ typename BlockScan<typename Rule::Acc>::TempStorage temp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x)
    block_scan_range<Rule, kReverse, true>(in, store, row, D, 0, D, Rule::identity(), temp);
}

template <typename Rule, bool kReverse, typename T, typename Store>
__global__ void scan_columns_kernel(const T* in, Store store, int64_t columns, int64_t D, int64_t inner) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = cuda_plan::column_base(c, D, inner);
    typename Rule::Acc acc = Rule::identity();
    for (int64_t step = 0; step < D; ++step) {
      const int64_t d = scan_index<kReverse>(step, D);
      const int64_t at = base + d * inner;
      acc = Rule::combine(acc, Rule::load(in[at], d));
      store(at, acc);
    }
  }
}

// Pass 1 of a split row: block (c, row) combines chunk c of the row, in scan order.
template <typename Rule, bool kReverse, typename T>
__global__ void chunk_totals_kernel(const T* in, typename Rule::Acc* totals, int64_t D, int64_t chunk, int64_t splits) {
  __shared__ typename BlockScan<typename Rule::Acc>::TempStorage temp;
  const int64_t row = blockIdx.y, c = blockIdx.x;
  const auto total = block_scan_range<Rule, kReverse, false>(in, NoStore{}, row, D, c * chunk,
                                                             cuda_plan::chunk_length(chunk, D, c), Rule::identity(), temp);
  if (threadIdx.x == 0) totals[row * splits + c] = total;
}

// Pass 2: a thread per row turns its chunk totals into carries in place (exclusive scans).
template <typename Rule>
__global__ void chunk_carries_kernel(typename Rule::Acc* totals, int64_t rows, int64_t splits) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  typename Rule::Acc* t = totals + row * splits;
  typename Rule::Acc carry = Rule::identity();
  for (int64_t c = 0; c < splits; ++c) {
    const typename Rule::Acc next = Rule::combine(carry, t[c]);
    t[c] = carry;
    carry = next;
  }
}

// Pass 3: block (c, row) scans chunk c from its carry.
template <typename Rule, bool kReverse, typename T, typename Store>
__global__ void scan_chunks_kernel(const T* in, Store store, const typename Rule::Acc* carries, int64_t D, int64_t chunk,
                                   int64_t splits) {
  __shared__ typename BlockScan<typename Rule::Acc>::TempStorage temp;
  const int64_t row = blockIdx.y, c = blockIdx.x;
  block_scan_range<Rule, kReverse, true>(in, store, row, D, c * chunk, cuda_plan::chunk_length(chunk, D, c),
                                         carries[row * splits + c], temp);
}

template <typename Rule, bool kReverse, typename T, typename Store>
void scan_split_rows(const T* x, const Store& y, int64_t rows, int64_t D, const cuda_plan::RowSplit& sp, int dev,
                     cudaStream_t stream, const char* op) {
  using Acc = typename Rule::Acc;
  TensorBase scratch = kiln::detail::empty_dense({rows * sp.splits * int64_t(sizeof(Acc))},
                                                 TensorOptions(DType::UInt8, Device(DeviceType::CUDA, dev)));
  Acc* totals = static_cast<Acc*>(scratch.data_ptr());
  const dim3 grid(unsigned(sp.splits), unsigned(rows));
  chunk_totals_kernel<Rule, kReverse><<<grid, kBlockThreads, 0, stream>>>(x, totals, D, sp.chunk, sp.splits);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  chunk_carries_kernel<Rule><<<unsigned((rows + 127) / 128), 128, 0, stream>>>(totals, rows, sp.splits);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  scan_chunks_kernel<Rule, kReverse><<<grid, kBlockThreads, 0, stream>>>(x, y, totals, D, sp.chunk, sp.splits);
}

inline unsigned grid_for(int64_t work_items, int64_t per_block, int dev) {
  const int64_t blocks = (work_items + per_block - 1) / per_block;
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t(detail::sm_count(dev)) * 32)));
}

}  // namespace scan_engine

// Runs Rule along plan.dim of `x` (contiguous), handing every running value to `store`.
template <typename Rule, bool kReverse, typename T, typename Store>
void run_scan(const meta::AlongDimPlan& plan, const T* x, const Store& store, int dev, const char* op) {
  using namespace scan_engine;
  const int64_t outer = plan.split.outer, D = plan.split.size, inner = plan.split.inner;
  cudaStream_t stream = detail::current_cuda_stream(dev);
  if (inner > 1) {
    const int threads = 256;
    scan_columns_kernel<Rule, kReverse>
        <<<grid_for(outer * inner, threads, dev), threads, 0, stream>>>(x, store, outer * inner, D, inner);
  } else if (const cuda_plan::RowSplit sp = cuda_plan::row_split(outer, D, detail::sm_count(dev)); sp.splits > 1) {
    scan_split_rows<Rule, kReverse>(x, store, outer, D, sp, dev, stream, op);
  } else if (D >= kLongRow) {
    scan_rows_block_kernel<Rule, kReverse><<<grid_for(outer, 1, dev), kBlockThreads, 0, stream>>>(x, store, outer, D);
  } else {
    scan_rows_warp_kernel<Rule, kReverse><<<grid_for(outer, kWarpsPerBlock, dev), dim3(kWarp, kWarpsPerBlock), 0,
                                            stream>>>(x, store, outer, D);
  }
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

// Rule over self (contiguous, of plan.dtype) into the store make_store(T{}) builds for its
// element type.
template <template <typename> class RuleOf, bool kReverse, typename MakeStore>
void scan_into(const meta::AlongDimPlan& plan, const TensorBase& self, const char* op, MakeStore&& make_store) {
  detail::check_device(self.device().index, op);
  if (self.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (RuleOf<T>::kDefined) {
      run_scan<RuleOf<T>, kReverse>(plan, static_cast<const T*>(self.data_ptr()), make_store(tag), dev, op);
    } else {
      KILN_FAIL(InternalError, op, "self", "no scan kernel for dtype ", dtype_name(plan.dtype));
    }
  });
}

// A scan with one result.
template <template <typename> class RuleOf, bool kReverse = false>
void scan_values(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  scan_into<RuleOf, kReverse>(plan, self, op, [&](auto tag) {
    using T = decltype(tag);
    return scan_engine::StoreValue<T, RuleOf<T>>{static_cast<T*>(out.data_ptr())};
  });
}

// A scan with values and their int64 indices (cummax, cummin).
template <template <typename> class RuleOf>
void scan_values_indices(const meta::AlongDimPlan& plan, const TensorBase& values, const TensorBase& indices,
                         const TensorBase& self, const char* op) {
  scan_into<RuleOf, false>(plan, self, op, [&](auto tag) {
    using T = decltype(tag);
    return scan_engine::StoreValueIndex<T, RuleOf<T>>{static_cast<T*>(values.data_ptr()),
                                                      static_cast<int64_t*>(indices.data_ptr())};
  });
}

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_SCAN_ENGINE_CUH_
