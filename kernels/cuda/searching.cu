// searchsorted, bucketize, histc and _bincount on CUDA (plans in kiln/meta/searching.h).
//
// searchsorted/bucketize: one thread per value, probing as PyTorch (kiln/common/search_rules.h);
// a sorter is checked by a first pass whose flag the host reads back (a sync) before searching.
// histc and bincount count with atomics on 64-bit integers (each block counts into shared
// memory first when the bins fit), so counts are exact and deterministic; bincount's weighted
// sums use float/double atomicAdd and, as in PyTorch's CUDA kernel, their order of additions
// (and so the last bits of a sum) may vary from run to run. histc's range from the data is one
// min/max reduction read back to the host (as PyTorch's aminmax + item), and bincount's values
// are checked before anything is written.
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>
#include <vector>
#include "kiln/common/search_rules.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/bincount.h"
#include "kiln/gen/kernels/cuda/bucketize.h"
#include "kiln/gen/kernels/cuda/histc.h"
#include "kiln/gen/kernels/cuda/searchsorted.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kSharedBins = 2048;  // bins a block counts in shared memory (8 KiB of uint32)

// The device, its stream and a launch shape for a grid-stride loop over n elements.
struct SearchStream {
  SearchStream(const TensorBase& like, const char* op_) : op(op_), device(like.device()) {
    detail::check_device(device.index, op);
    guard = std::make_unique<DeviceGuard>(device.index);
    stream = detail::current_cuda_stream(device.index);
  }
  unsigned blocks(int64_t n) const {
    const int64_t most = int64_t(detail::sm_count(device.index)) * 8;
    return unsigned(std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, most)));
  }
  void launched() const { KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch"); }
  // Copies `bytes` from the device to the host and waits for them.
  void read(void* host, const void* dev, size_t bytes) const {
    KILN_CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, stream), op, "copy");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream), op, "sync");
  }
  void zero(void* dev, size_t bytes) const { KILN_CUDA_CHECK(cudaMemsetAsync(dev, 0, bytes, stream), op, "memset"); }
  const char* op;
  Device device;
  std::unique_ptr<DeviceGuard> guard;
  cudaStream_t stream = nullptr;
};

TensorBase as_dtype(const TensorBase& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  TensorBase c = kiln::detail::empty_dense(t.sizes(), dtype, t.device());
  c.copy_(t);
  return c;
}

#define KILN_GRID_LOOP(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// ---------------------------------------------------------------- searchsorted / bucketize
__global__ void check_sorter_kernel(const int64_t* sorter, int64_t total, int64_t row_len, int64_t* bad) {
  KILN_GRID_LOOP(i, total) {
    if (sorter[i] < 0 || sorter[i] >= row_len) {
      bad[1] = sorter[i];
      bad[0] = 1;
    }
  }
}

template <typename T, typename R>
__global__ void search_kernel(const T* bd, const int64_t* sorter, const T* vals, R* out, int64_t total, int64_t per_row,
                              int64_t n, bool one_row, bool right) {
  using M = opmath_t<T>;
  KILN_GRID_LOOP(i, total) {
    const int64_t off = one_row ? 0 : (i / per_row) * n;
    out[i] = R(search::bound<M>(bd + off, sorter ? sorter + off : nullptr, n, M(vals[i]), right));
  }
}

void search(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& seq, const TensorBase& values,
            const TensorBase& sorter, const char* op) {
  const int64_t total = plan.rows * plan.per_row;
  SearchStream s(out, op);
  const int64_t* sort = sorter.defined() ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr;
  if (sort && sorter.numel() > 0) {
    TensorBase bad = kiln::detail::empty_dense({2}, DType::Int64, out.device());
    s.zero(bad.data_ptr(), 2 * sizeof(int64_t));
    check_sorter_kernel<<<s.blocks(sorter.numel()), kThreads, 0, s.stream>>>(sort, sorter.numel(), plan.row_len,
                                                                             static_cast<int64_t*>(bad.data_ptr()));
    s.launched();
    int64_t host[2] = {0, 0};
    s.read(host, bad.data_ptr(), sizeof(host));
    KILN_CHECK(host[0] == 0, IndexError, op, "sorter", "sorter index ", host[1],
               " is out of range for boundaries of size ", plan.row_len);
  }
  if (total == 0) return;
  const TensorBase bd = as_dtype(seq, plan.compare_dtype), v = as_dtype(values, plan.compare_dtype);
  visit_dtype(plan.compare_dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || is_complex_v<T>) {
      KILN_FAIL(DTypeError, op, "self", "not implemented for ", dtype_name(plan.compare_dtype));
    } else {
      const T* b = static_cast<const T*>(bd.data_ptr());
      const T* x = static_cast<const T*>(v.data_ptr());
      if (plan.dtype == DType::Int32)
        search_kernel<<<s.blocks(total), kThreads, 0, s.stream>>>(b, sort, x, static_cast<int32_t*>(out.data_ptr()),
                                                                  total, plan.per_row, plan.row_len, plan.rows == 1,
                                                                  plan.right);
      else
        search_kernel<<<s.blocks(total), kThreads, 0, s.stream>>>(b, sort, x, static_cast<int64_t*>(out.data_ptr()),
                                                                  total, plan.per_row, plan.row_len, plan.rows == 1,
                                                                  plan.right);
      s.launched();
    }
  });
}

// ---------------------------------------------------------------- counting
// counts[bin_of(i)] += 1 for every i with a bin (bin_of returns -1 to skip), exact in 64 bits.
template <typename BinOf>
__global__ void count_kernel(int64_t n, int64_t bins, unsigned long long* counts, BinOf bin_of) {
  extern __shared__ unsigned int local[];
  const bool shared = bins <= kSharedBins;
  if (shared) {
    for (int64_t k = threadIdx.x; k < bins; k += blockDim.x) local[k] = 0;
    __syncthreads();
  }
  KILN_GRID_LOOP(i, n) {
    const int64_t k = bin_of(i);
    if (k < 0) continue;
    if (shared) atomicAdd(&local[k], 1u);
    else atomicAdd(&counts[k], 1ull);
  }
  if (shared) {
    __syncthreads();
    for (int64_t k = threadIdx.x; k < bins; k += blockDim.x)
      if (local[k]) atomicAdd(&counts[k], (unsigned long long)local[k]);
  }
}

template <typename BinOf>
void count(const SearchStream& s, int64_t n, int64_t bins, unsigned long long* counts, const BinOf& bin_of) {
  s.zero(counts, size_t(bins) * sizeof(unsigned long long));
  if (n == 0) return;
  const size_t shared = bins <= kSharedBins ? size_t(bins) * sizeof(unsigned int) : 0;
  count_kernel<<<s.blocks(n), kThreads, shared, s.stream>>>(n, bins, counts, bin_of);
  s.launched();
}

template <typename T>
struct HistcBin {
  const T* x;
  T lo, hi;
  int64_t bins;
  __device__ int64_t operator()(int64_t i) const { return search::histc_bin<opmath_t<T>>(x[i], lo, hi, bins); }
};

template <typename T>
__global__ void counts_to_kernel(const unsigned long long* counts, T* y, int64_t bins) {
  KILN_GRID_LOOP(k, bins) y[k] = T(opmath_t<T>(counts[k]));
}

// Per block: [min, max, any NaN] of its part of x, as doubles.
template <typename T>
__global__ void extremes_kernel(const T* x, int64_t n, double* partial) {
  __shared__ double mins[kThreads], maxs[kThreads], nans[kThreads];
  double mn = INFINITY, mx = -INFINITY, nan = 0;
  KILN_GRID_LOOP(i, n) {
    const double v = double(opmath_t<T>(x[i]));
    if (v != v) nan = 1;
    else mn = fmin(mn, v), mx = fmax(mx, v);
  }
  mins[threadIdx.x] = mn, maxs[threadIdx.x] = mx, nans[threadIdx.x] = nan;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      mins[threadIdx.x] = fmin(mins[threadIdx.x], mins[threadIdx.x + half]);
      maxs[threadIdx.x] = fmax(maxs[threadIdx.x], maxs[threadIdx.x + half]);
      nans[threadIdx.x] = fmax(nans[threadIdx.x], nans[threadIdx.x + half]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[3 * blockIdx.x] = mins[0];
    partial[3 * blockIdx.x + 1] = maxs[0];
    partial[3 * blockIdx.x + 2] = nans[0];
  }
}

// ---------------------------------------------------------------- bincount
template <typename I>
__global__ void check_values_kernel(const I* x, int64_t n, int64_t length, int64_t* bad) {
  KILN_GRID_LOOP(i, n) {
    const int64_t v = int64_t(x[i]);
    if (v < 0 || v >= length) {
      bad[1] = v;
      bad[0] = 1;
    }
  }
}

template <typename I>
struct ValueBin {
  const I* x;
  __device__ int64_t operator()(int64_t i) const { return int64_t(x[i]); }
};

template <typename I, typename W>
__global__ void weighted_kernel(const I* x, const W* w, int64_t n, W* y) {
  KILN_GRID_LOOP(i, n) atomicAdd(&y[int64_t(x[i])], w[i]);
}

}  // namespace

void searchsorted(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& sorted_sequence,
                  const TensorBase& self, const TensorBase& sorter, bool /*out_int32*/, bool /*right*/,
                  std::optional<std::string_view> /*side*/) {
  search(plan, out, sorted_sequence, self, sorter, "searchsorted");
}

void bucketize(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& self,
               const TensorBase& boundaries, bool /*out_int32*/, bool /*right*/) {
  search(plan, out, boundaries, self, TensorBase(), "bucketize");
}

void histc(const meta::HistcPlan& plan, const TensorBase& out, const TensorBase& self, int64_t /*bins*/,
           const Scalar& /*min*/, const Scalar& /*max*/) {
  const char* op = "histc";
  SearchStream s(out, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_floating(dtype_of<T>)) {
      KILN_FAIL(DTypeError, op, "self", "not implemented for '", dtype_name(plan.dtype), "'");
    } else {
      const T* x = static_cast<const T*>(self.data_ptr());
      const int64_t n = self.numel(), bins = plan.bins;
      double lo = plan.lo, hi = plan.hi;
      if (plan.from_data) {
        const unsigned blocks = s.blocks(n);
        TensorBase partial = kiln::detail::empty_dense({int64_t(blocks) * 3}, DType::Float64, out.device());
        extremes_kernel<<<blocks, kThreads, 0, s.stream>>>(x, n, static_cast<double*>(partial.data_ptr()));
        s.launched();
        std::vector<double> host(size_t(blocks) * 3);
        s.read(host.data(), partial.data_ptr(), host.size() * sizeof(double));
        double mn = INFINITY, mx = -INFINITY;
        bool nan = false;
        for (unsigned b = 0; b < blocks; ++b)
          mn = std::min(mn, host[3 * b]), mx = std::max(mx, host[3 * b + 1]), nan = nan || host[3 * b + 2] != 0;
        meta::histc_range_from_data(op, n == 0, nan ? NAN : mn, nan ? NAN : mx, &lo, &hi);
      }
      TensorBase counts = kiln::detail::empty_dense({bins}, DType::Int64, out.device());
      auto* c = static_cast<unsigned long long*>(counts.data_ptr());
      count(s, n, bins, c, HistcBin<T>{x, T(lo), T(hi), bins});
      counts_to_kernel<<<s.blocks(bins), kThreads, 0, s.stream>>>(c, static_cast<T*>(out.data_ptr()), bins);
      s.launched();
    }
  });
}

void bincount(const meta::BincountPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& weights,
              int64_t /*length*/) {
  const char* op = "_bincount";
  SearchStream s(out, op);
  const int64_t n = self.numel(), length = plan.length;
  visit_dtype(self.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if constexpr (!std::is_integral_v<I> || std::is_same_v<I, bool>) {
      KILN_FAIL(DTypeError, op, "self", "not implemented for '", dtype_name(self.dtype()), "'");
    } else {
      const I* x = static_cast<const I*>(self.data_ptr());
      if (n > 0) {  // every value in [0, length) before anything is written
        TensorBase bad = kiln::detail::empty_dense({2}, DType::Int64, out.device());
        s.zero(bad.data_ptr(), 2 * sizeof(int64_t));
        check_values_kernel<<<s.blocks(n), kThreads, 0, s.stream>>>(x, n, length,
                                                                    static_cast<int64_t*>(bad.data_ptr()));
        s.launched();
        int64_t host[2] = {0, 0};
        s.read(host, bad.data_ptr(), sizeof(host));
        KILN_CHECK(host[0] == 0, IndexError, op, "self", "value ", host[1], " is out of range for ", length, " bins");
      }
      if (!weights.defined()) {
        count(s, n, length, static_cast<unsigned long long*>(out.data_ptr()), ValueBin<I>{x});
        return;
      }
      auto sum = [&](auto w_tag) {
        using W = decltype(w_tag);
        s.zero(out.data_ptr(), size_t(length) * sizeof(W));
        if (n == 0) return;
        weighted_kernel<<<s.blocks(n), kThreads, 0, s.stream>>>(x, static_cast<const W*>(weights.data_ptr()), n,
                                                                static_cast<W*>(out.data_ptr()));
        s.launched();
      };
      if (plan.dtype == DType::Float32) sum(float{});
      else sum(double{});
    }
  });
}

}  // namespace kiln::cuda
