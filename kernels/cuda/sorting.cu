// The sorting ops on CUDA: every line's order-preserving keys (kiln/common/sort_keys.h, the
// CPU's) radix-sorted by cub with the indices as payload (stable, so equal values keep index
// order, the CPU's tie rule), then read off: sort writes every place, topk the first k, the
// selections one place per line (sort_keys::pick_place, the CPU's rule).
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <algorithm>
#include <limits>
#include "kiln/common/convert.h"
#include "kiln/common/sort_keys.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/kthvalue.h"
#include "kiln/gen/kernels/cuda/median_all.h"
#include "kiln/gen/kernels/cuda/median_dim.h"
#include "kiln/gen/kernels/cuda/mode.h"
#include "kiln/gen/kernels/cuda/nanmedian_all.h"
#include "kiln/gen/kernels/cuda/nanmedian_dim.h"
#include "kiln/gen/kernels/cuda/sort.h"
#include "kiln/gen/kernels/cuda/topk.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using sort_keys::KeyOf;
using sort_keys::Pick;

// [outer, n, inner] seen as lines of n elements at stride inner.
struct Lines {
  int64_t n, inner, lines;
  __device__ int64_t base(int64_t l) const { return (l / inner) * n * inner + l % inner; }
};

template <typename T, typename K>
__global__ void keys_kernel(const T* x, K* keys, int64_t* idx, Lines g, K flip) {
  const int64_t total = g.lines * g.n;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = p / g.n, j = p % g.n;
    keys[p] = KeyOf<T>::key(x[g.base(l) + j * g.inner]) ^ flip;
    idx[p] = j;
  }
}

__global__ void offsets_kernel(int64_t* offsets, int64_t count, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    offsets[i] = i * n;
}

// The first `take` places of every sorted line into [outer, take, inner].
template <typename T, typename K>
__global__ void write_kernel(const K* keys, const int64_t* idx, const T* x, T* v, int64_t* ind, Lines g, int64_t take,
                             K flip) {
  const int64_t total = g.lines * take;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = p / take, j = p % take, from = idx[l * g.n + j];
    const int64_t out = (l / g.inner) * take * g.inner + l % g.inner + j * g.inner;
    v[out] = KeyOf<T>::value_or_input(keys[l * g.n + j] ^ flip, x, g.base(l) + from * g.inner);
    ind[out] = from;
  }
}

// One place per line, a thread per line.
template <typename T, typename K>
__global__ void select_kernel(const K* keys, const int64_t* idx, const T* x, T* v, int64_t* ind, Lines g, Pick how,
                              int64_t rank) {
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < g.lines; l += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = sort_keys::pick_place<T>(how, rank, keys + l * g.n, g.n), from = idx[l * g.n + at];
    v[l] = KeyOf<T>::value_or_input(keys[l * g.n + at], x, g.base(l) + from * g.inner);
    if (ind) ind[l] = from;
  }
}

template <typename T>
__global__ void nan_kernel(T* v) {
  v[0] = kiln::detail::convert<T>(std::numeric_limits<float>::quiet_NaN());
}

unsigned blocks_for(int64_t work, int threads, int dev) {
  return unsigned(
      std::max<int64_t>(1, std::min<int64_t>((work + threads - 1) / threads, int64_t(detail::sm_count(dev)) * 8)));
}

// Every line of self as sorted keys (complemented when descending) and indices, line after line.
template <typename T>
struct SortedLines {
  using K = typename KeyOf<T>::K;
  TensorBase keys, idx;
  const K* key_ptr() const { return static_cast<const K*>(keys.data_ptr()); }
  const int64_t* idx_ptr() const { return static_cast<const int64_t*>(idx.data_ptr()); }
};

template <typename T>
SortedLines<T> sort_lines(const Lines& g, const TensorBase& self, bool descending, const char* op,
                          cudaStream_t stream) {
  using K = typename KeyOf<T>::K;
  const int dev = self.device().index;
  const int64_t total = g.lines * g.n;
  const TensorOptions key_words(sizeof(K) == 8 ? DType::Int64 : DType::Int32, self.device());
  const TensorOptions longs(DType::Int64, self.device());
  TensorBase keys_in = kiln::detail::empty_dense({total}, key_words),
             idx_in = kiln::detail::empty_dense({total}, longs);
  SortedLines<T> out{kiln::detail::empty_dense({total}, key_words), kiln::detail::empty_dense({total}, longs)};
  K* kin = static_cast<K*>(keys_in.data_ptr());
  int64_t* iin = static_cast<int64_t*>(idx_in.data_ptr());
  K* kout = static_cast<K*>(out.keys.data_ptr());
  int64_t* iout = static_cast<int64_t*>(out.idx.data_ptr());
  keys_kernel<T, K><<<blocks_for(total, 256, dev), 256, 0, stream>>>(static_cast<const T*>(self.data_ptr()), kin, iin,
                                                                     g, descending ? ~K(0) : K(0));
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  const int bits = int(sizeof(K) * 8);
  size_t temp_bytes = 0;
  if (g.lines == 1) {
    KILN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin, kout, iin, iout, total, 0, bits, stream),
                    op, "radix sort");
    TensorBase temp = kiln::detail::empty_dense({int64_t(std::max<size_t>(temp_bytes, 1))},
                                                TensorOptions(DType::UInt8, self.device()));
    KILN_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, kin, kout, iin, iout, total, 0, bits, stream), op,
        "radix sort");
    return out;
  }
  KILN_CHECK(total <= int64_t(std::numeric_limits<int>::max()), ValueError, op, "self",
             "a segmented sort of more than 2^31 - 1 elements is not supported on CUDA, got ", total);
  TensorBase offsets = kiln::detail::empty_dense({g.lines + 1}, longs);
  int64_t* off = static_cast<int64_t*>(offsets.data_ptr());
  offsets_kernel<<<blocks_for(g.lines + 1, 256, dev), 256, 0, stream>>>(off, g.lines + 1, g.n);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  KILN_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp_bytes, kin, kout, iin, iout, int(total),
                                                           int(g.lines), off, off + 1, 0, bits, stream),
                  op, "segmented radix sort");
  TensorBase temp =
      kiln::detail::empty_dense({int64_t(std::max<size_t>(temp_bytes, 1))}, TensorOptions(DType::UInt8, self.device()));
  KILN_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.data_ptr(), temp_bytes, kin, kout, iin, iout,
                                                           int(total), int(g.lines), off, off + 1, 0, bits, stream),
                  op, "segmented radix sort");
  return out;
}

template <typename Fn>
void visit_sortable(DType dtype, const Fn& fn) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T>) fn(T{});
  });
}

// sort and topk: the first plan.take places of every line, in order.
void sort_and_take(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                   const TensorBase& self, const char* op) {
  const int dev = self.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  const Lines g{plan.split.size, plan.split.inner, plan.split.outer * plan.split.inner};
  if (g.lines * plan.take == 0) return;
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_sortable(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using K = typename KeyOf<T>::K;
    const SortedLines<T> s = sort_lines<T>(g, self, plan.descending, op, stream);
    write_kernel<T, K><<<blocks_for(g.lines * plan.take, 256, dev), 256, 0, stream>>>(
        s.key_ptr(), s.idx_ptr(), static_cast<const T*>(self.data_ptr()), static_cast<T*>(values.data_ptr()),
        static_cast<int64_t*>(indices.data_ptr()), g, plan.take, plan.descending ? ~K(0) : K(0));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
}

void select_lines(Pick how, const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                  const TensorBase& self, const char* op) {
  const int dev = self.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  const Lines g{plan.split.size, plan.split.inner, plan.split.outer * plan.split.inner};
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_sortable(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using K = typename KeyOf<T>::K;
    T* v = static_cast<T*>(values.data_ptr());
    if (g.n == 0) {  // median() of no elements: NaN (an integer result gets NaN's conversion)
      if (values.numel() > 0) nan_kernel<T><<<1, 1, 0, stream>>>(v);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
      return;
    }
    if (g.lines == 0) return;
    const SortedLines<T> s = sort_lines<T>(g, self, false, op, stream);
    select_kernel<T, K><<<blocks_for(g.lines, 128, dev), 128, 0, stream>>>(
        s.key_ptr(), s.idx_ptr(), static_cast<const T*>(self.data_ptr()), v,
        indices.defined() ? static_cast<int64_t*>(indices.data_ptr()) : nullptr, g, how, plan.rank);
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
}

}  // namespace

void sort(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  sort_and_take(plan, values, indices, self, "sort");
}
void topk(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  sort_and_take(plan, values, indices, self, "topk");
}
void kthvalue(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  select_lines(Pick::Rank, plan, values, indices, self, "kthvalue");
}
void median_dim(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                const TensorBase& self) {
  select_lines(Pick::Median, plan, values, indices, self, "median");
}
void nanmedian_dim(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                   const TensorBase& self) {
  select_lines(Pick::NanMedian, plan, values, indices, self, "nanmedian");
}
void mode(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  select_lines(Pick::Mode, plan, values, indices, self, "mode");
}
void median_all(const meta::SortPlan& plan, const TensorBase& out, const TensorBase& self) {
  select_lines(Pick::Median, plan, out, TensorBase(), self, "median");
}
void nanmedian_all(const meta::SortPlan& plan, const TensorBase& out, const TensorBase& self) {
  select_lines(Pick::NanMedian, plan, out, TensorBase(), self, "nanmedian");
}

}  // namespace kiln::cuda
