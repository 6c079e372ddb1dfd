// Batch norm's training kernels on CUDA (kiln/meta/normalization.h): an input [N, C, *] is N * C
// planes of HW elements, and channel c's statistics gather its N planes. Each channel's elements
// are cut into `splits` contiguous runs, one block each (grid channels x splits, enough blocks to
// fill the device); a block reduces its run, a second kernel combines each channel's runs in
// order (no atomics: results repeat bit for bit on one device), and an elementwise kernel writes.
// Forward: Welford's running mean and M2 per thread, merged pairwise (Chan's formula), so one
// read of the input gives a variance as exact as two passes. Backward: sum(dy) and
// sum(dy * (x - mean)) per run, then dx elementwise; the parameters' gradients fall out of the
// sums. float32 and float64 (native_batch_norm runs 16-bit inputs on float32 copies).
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include "block_reduce.cuh"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_batch_norm_training.h"
#include "kiln/gen/kernels/cuda/_batch_norm_training_backward.h"
#include "kiln/kernel/optional_operand.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using ::kiln::detail::ptr_or_null;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMinRun = 4096;  // elements per block at least

// Welford's state: count, mean, sum of squared deviations (the count is a float for float inputs:
// exact to 2^24 elements, and merging larger counts only rounds the weights of the merge).
template <typename C>
struct Moments {
  C n, mean, m2;
};

template <typename C>
__device__ Moments<C> merge(Moments<C> a, Moments<C> b) {
  if (b.n == C(0)) return a;
  if (a.n == C(0)) return b;
  const C n = a.n + b.n, delta = b.mean - a.mean, share = b.n / n;
  return {n, a.mean + delta * share, a.m2 + b.m2 + delta * delta * a.n * share};
}

// Where element j of channel c's run lies: plane j / HW of the channel, offset j % HW.
__device__ inline int64_t offset_of(int64_t j, int64_t c, int64_t channels, int64_t HW) {
  return ((j / HW) * channels + c) * HW + j % HW;
}

__device__ inline void run_of(int64_t count, int64_t splits, int64_t s, int64_t& begin, int64_t& end) {
  begin = count * s / splits;
  end = count * (s + 1) / splits;
}

// Block (c, s): the moments of its run of channel c, into partial[c * splits + s].
template <typename T>
__global__ void stats_kernel(const T* x, int64_t channels, int64_t HW, int64_t count, Moments<T>* partial) {
  const int64_t c = blockIdx.x, s = blockIdx.y, splits = gridDim.y;
  int64_t begin, end;
  run_of(count, splits, s, begin, end);
  Moments<T> m{0, 0, 0};
  for (int64_t j = begin + threadIdx.x; j < end; j += kThreads) {
    const T v = x[offset_of(j, c, channels, HW)];
    m.n += T(1);
    const T delta = v - m.mean;
    m.mean += delta / m.n;
    m.m2 += delta * (v - m.mean);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    Moments<T> other{__shfl_down_sync(0xffffffffu, m.n, offset), __shfl_down_sync(0xffffffffu, m.mean, offset),
                     __shfl_down_sync(0xffffffffu, m.m2, offset)};
    m = merge(m, other);
  }
  __shared__ Moments<T> warps[kWarps];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x != 0) return;
  Moments<T> total = warps[0];
  for (int w = 1; w < kWarps; ++w) total = merge(total, warps[w]);
  partial[c * splits + s] = total;
}

// A thread per channel: its runs merged in order, then mean and 1 / sqrt(biased var + eps).
template <typename T>
__global__ void finalize_stats_kernel(const Moments<T>* partial, int64_t channels, int64_t splits, double eps, T* mean,
                                      T* invstd) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  Moments<T> m = partial[c * splits];
  for (int64_t s = 1; s < splits; ++s) m = merge(m, partial[c * splits + s]);
  mean[c] = m.n > T(0) ? m.mean : T(0);          // no elements: mean 0,
  invstd[c] = T(1) / sqrt(m.m2 / m.n + T(eps));  // invstd NaN (0 / 0), as the CPU's
}

template <typename T>
__global__ void apply_kernel(const T* x, const T* w, const T* b, const T* mean, const T* invstd, T* y, int64_t total,
                             int64_t channels, int64_t HW) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / HW) % channels;
    const T scale = invstd[c] * (w ? w[c] : T(1)), shift = b ? b[c] : T(0);
    y[i] = (x[i] - mean[c]) * scale + shift;
  }
}

// Block (c, s): sum(dy) and sum(dy * (x - mean)) over its run, into partial[2 * (c * splits + s)].
template <typename T>
__global__ void grad_sums_kernel(const T* dy, const T* x, const T* mean, int64_t channels, int64_t HW, int64_t count,
                                 T* partial) {
  const int64_t c = blockIdx.x, s = blockIdx.y, splits = gridDim.y;
  int64_t begin, end;
  run_of(count, splits, s, begin, end);
  const T mu = mean[c];
  T sum_dy = 0, sum_dy_xmu = 0;
  for (int64_t j = begin + threadIdx.x; j < end; j += kThreads) {
    const int64_t o = offset_of(j, c, channels, HW);
    sum_dy += dy[o];
    sum_dy_xmu += dy[o] * (x[o] - mu);
  }
  __shared__ T shared[kWarps];
  sum_dy = block_sum<kThreads>(sum_dy, shared);
  sum_dy_xmu = block_sum<kThreads>(sum_dy_xmu, shared);
  if (threadIdx.x == 0) {
    partial[2 * (c * splits + s)] = sum_dy;
    partial[2 * (c * splits + s) + 1] = sum_dy_xmu;
  }
}

// A thread per channel: the sums in run order; the parameters' gradients, and dx's per-channel
// coefficients: dx = (dy - mean_dy - (x - mean) * k) * scale.
template <typename T>
__global__ void finalize_grad_kernel(const T* partial, const T* w, const T* invstd, int64_t channels, int64_t splits,
                                     int64_t count, T* dw, T* db, T* coef) {
  const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= channels) return;
  T sum_dy = 0, sum_dy_xmu = 0;
  for (int64_t s = 0; s < splits; ++s) {
    sum_dy += partial[2 * (c * splits + s)];
    sum_dy_xmu += partial[2 * (c * splits + s) + 1];
  }
  const T rs = invstd[c];
  dw[c] = sum_dy_xmu * rs;
  db[c] = sum_dy;
  const T n = T(count > 0 ? count : 1);
  coef[3 * c] = sum_dy / n;
  coef[3 * c + 1] = sum_dy_xmu * rs * rs / n;
  coef[3 * c + 2] = rs * (w ? w[c] : T(1));
}

template <typename T>
__global__ void grad_input_kernel(const T* dy, const T* x, const T* mean, const T* coef, T* dx, int64_t total,
                                  int64_t channels, int64_t HW) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / HW) % channels;
    dx[i] = (dy[i] - coef[3 * c] - (x[i] - mean[c]) * coef[3 * c + 1]) * coef[3 * c + 2];
  }
}

// Runs per channel: enough blocks for a few per multiprocessor, each at least kMinRun elements.
int64_t splits_for(const meta::BatchNormPlan& p, int device) {
  const int64_t count = p.N * p.HW, wanted = 4 * int64_t(detail::sm_count(device));
  const int64_t per_channel = (wanted + p.C - 1) / std::max<int64_t>(p.C, 1);
  return std::clamp<int64_t>(std::min(per_channel, (count + kMinRun - 1) / kMinRun), 1, 65535);
}

unsigned grid_for(int64_t n) { return unsigned(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 20)); }

// Runs body(T{}, stream, count, splits) on the input's device for the registry's dtypes (float32,
// float64): count elements per channel, cut into splits runs.
template <typename Body>
void for_channels(const meta::BatchNormPlan& plan, const TensorBase& input, const char* op, Body&& body) {
  if (plan.C == 0) return;
  const int dev = input.device().index;
  detail::check_device(dev, op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const int64_t count = plan.N * plan.HW, splits = splits_for(plan, dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) body(tag, stream, count, splits);
  });
}

template <typename T>
const T* in(const TensorBase& t) {
  return static_cast<const T*>(t.data_ptr());
}
template <typename T>
T* out(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

}  // namespace

void _batch_norm_training(const meta::BatchNormPlan& plan, const TensorBase& output, const TensorBase& save_mean,
                          const TensorBase& save_invstd, const TensorBase& input, const TensorBase& weight,
                          const TensorBase& bias) {
  const char* op = "_batch_norm_training";
  for_channels(plan, input, op, [&](auto tag, cudaStream_t stream, int64_t count, int64_t splits) {
    using T = decltype(tag);
    TensorBase partial =
        kiln::detail::empty_dense({plan.C * splits * int64_t(sizeof(Moments<T>))}, DType::UInt8, input.device(), op);
    auto* moments = static_cast<Moments<T>*>(partial.data_ptr());
    stats_kernel<T><<<dim3(unsigned(plan.C), unsigned(splits)), kThreads, 0, stream>>>(in<T>(input), plan.C, plan.HW,
                                                                                       count, moments);
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    finalize_stats_kernel<T><<<grid_for(plan.C), kThreads, 0, stream>>>(moments, plan.C, splits, plan.eps,
                                                                         out<T>(save_mean), out<T>(save_invstd));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    const int64_t total = plan.C * count;
    if (total == 0) return;
    apply_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(
        in<T>(input), ptr_or_null<T>(weight), ptr_or_null<T>(bias), in<T>(save_mean), in<T>(save_invstd),
        out<T>(output), total, plan.C, plan.HW);
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
}

void _batch_norm_training_backward(const meta::BatchNormPlan& plan, const TensorBase& grad_input,
                                   const TensorBase& grad_weight, const TensorBase& grad_bias,
                                   const TensorBase& grad_out, const TensorBase& input, const TensorBase& weight,
                                   const TensorBase& save_mean, const TensorBase& save_invstd) {
  const char* op = "_batch_norm_training_backward";
  for_channels(plan, input, op, [&](auto tag, cudaStream_t stream, int64_t count, int64_t splits) {
    using T = decltype(tag);
    TensorBase partial = kiln::detail::empty_dense({2 * plan.C * splits}, plan.dtype, input.device(), op);
    TensorBase coef = kiln::detail::empty_dense({3 * plan.C}, plan.dtype, input.device(), op);
    grad_sums_kernel<T><<<dim3(unsigned(plan.C), unsigned(splits)), kThreads, 0, stream>>>(
        in<T>(grad_out), in<T>(input), in<T>(save_mean), plan.C, plan.HW, count, out<T>(partial));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    finalize_grad_kernel<T><<<grid_for(plan.C), kThreads, 0, stream>>>(
        in<T>(partial), ptr_or_null<T>(weight), in<T>(save_invstd), plan.C, splits, count, out<T>(grad_weight),
        out<T>(grad_bias), out<T>(coef));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    const int64_t total = plan.C * count;
    if (total == 0) return;
    grad_input_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(in<T>(grad_out), in<T>(input), in<T>(save_mean),
                                                                   in<T>(coef), out<T>(grad_input), total, plan.C,
                                                                   plan.HW);
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
}

}  // namespace kiln::cuda
