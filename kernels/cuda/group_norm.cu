// Group norm's fused kernels on CUDA (kiln/meta/normalization.h), the CPU kernel's math
// (kernels/cpu/group_norm.cpp): an input of N * C * HxW values is N * group contiguous blocks, one
// per (sample, group), of D = C / group channels of HxW elements.
// Forward: a CUDA block per (sample, group) takes a two-pass mean and biased variance (block sums
// in a fixed tree), then writes x * scale[c] + shift[c] (scale = rstd * weight, shift = bias -
// mean * scale). Backward: a block per (sample, group) sums g = dy * w and g * (x - mean), then
// writes dx = dy * rstd * w[c] + (x - mean) * k + shift; a block per channel sums dweight and
// dbias over the samples. No atomics: results repeat bit for bit.
#include <cuda_runtime.h>
#include "block_reduce.cuh"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_group_norm_fused.h"
#include "kiln/gen/kernels/cuda/_group_norm_fused_backward.h"
#include "kiln/kernel/optional_operand.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using ::kiln::detail::ptr_or_null;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Block i = (sample, group) of `count` elements from channel c0 = (i % G) * D on.
template <typename T>
__global__ void forward_kernel(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t G, int64_t D,
                               int64_t HxW, double eps) {
  __shared__ T shared[kWarps];
  const int64_t i = blockIdx.x, count = D * HxW, c0 = (i % G) * D;
  const T* xb = x + i * count;
  T s = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) s += xb[j];
  s = block_sum<kThreads>(s, shared);
  const T mu = count > 0 ? s / T(count) : T(0);
  T q = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const T d = xb[j] - mu;
    q += d * d;
  }
  q = block_sum<kThreads>(q, shared);
  const T rs = T(1) / sqrt(q / T(count) + T(eps));  // an empty block: NaN, as the CPU's
  T* yb = y + i * count;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const int64_t c = c0 + j / HxW;
    const T scale = rs * (w ? w[c] : T(1));
    const T shift = (b ? b[c] : T(0)) - mu * scale;
    yb[j] = fma(xb[j], scale, shift);
  }
  if (threadIdx.x == 0) {
    mean[i] = mu;
    rstd[i] = rs;
  }
}

// dx of block i: with g = dy * w[c], k = -rstd^3 * sum(g * (x - mean)) / count and
// shift = -rstd * sum(g) / count, dx = dy * rstd * w[c] + (x - mean) * k + shift.
template <typename T>
__global__ void input_grad_kernel(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx, int64_t G,
                                  int64_t D, int64_t HxW) {
  __shared__ T shared[kWarps];
  const int64_t i = blockIdx.x, count = D * HxW, c0 = (i % G) * D;
  const T *dyb = dy + i * count, *xb = x + i * count;
  const T mu = mean[i], rs = rstd[i];
  T sg = 0, sgx = 0;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const T g = dyb[j] * (w ? w[c0 + j / HxW] : T(1));
    sg += g;
    sgx += g * (xb[j] - mu);
  }
  sg = block_sum<kThreads>(sg, shared);
  sgx = block_sum<kThreads>(sgx, shared);
  const T k = -rs * rs * rs * sgx / T(count), shift = -rs * sg / T(count);
  T* dxb = dx + i * count;
  for (int64_t j = threadIdx.x; j < count; j += kThreads) {
    const T scale = rs * (w ? w[c0 + j / HxW] : T(1));
    dxb[j] = fma(dyb[j], scale, fma(xb[j] - mu, k, shift));
  }
}

// dweight[c] = sum over samples and positions of dy * (x - mean) * rstd, dbias[c] = sum of dy:
// a block per channel, its threads over the N * HxW elements in a fixed assignment.
template <typename T>
__global__ void param_grad_kernel(const T* dy, const T* x, const T* mean, const T* rstd, T* dw, T* db, int64_t N,
                                  int64_t C, int64_t G, int64_t HxW) {
  __shared__ T shared[kWarps];
  const int64_t c = blockIdx.x, g = c / (C / G);
  T sw = 0, sb = 0;
  for (int64_t t = threadIdx.x; t < N * HxW; t += kThreads) {
    const int64_t n = t / HxW, at = (n * C + c) * HxW + t % HxW, stat = n * G + g;
    sw += dy[at] * (x[at] - mean[stat]) * rstd[stat];
    sb += dy[at];
  }
  sw = block_sum<kThreads>(sw, shared);
  sb = block_sum<kThreads>(sb, shared);
  if (threadIdx.x == 0) {
    dw[c] = sw;
    db[c] = sb;
  }
}

void check_blocks(int64_t blocks, const char* op) {
  KILN_CHECK(blocks <= 0x7fffffff, NotImplementedError, op, "input",
             "more than 2^31 - 1 (sample, group) blocks or channels on CUDA (got ", blocks, ")");
}

}  // namespace

void _group_norm_fused(const meta::GroupNormPlan& plan, const TensorBase& output, const TensorBase& mean,
                       const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
                       const TensorBase& bias) {
  const char* op = "_group_norm_fused";
  const int64_t blocks = plan.N * plan.group;
  if (blocks == 0) return;
  const int dev = input.device().index;
  detail::check_device(dev, op);
  check_blocks(blocks, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {  // the registry's dtypes
      forward_kernel<T><<<unsigned(blocks), kThreads, 0, detail::current_cuda_stream(dev)>>>(
          static_cast<const T*>(input.data_ptr()), ptr_or_null<T>(weight), ptr_or_null<T>(bias),
          static_cast<T*>(output.data_ptr()), static_cast<T*>(mean.data_ptr()), static_cast<T*>(rstd.data_ptr()),
          plan.group, plan.C / plan.group, plan.HxW, plan.eps);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

void _group_norm_fused_backward(const meta::GroupNormPlan& plan, const TensorBase& grad_input,
                                const TensorBase& grad_weight, const TensorBase& grad_bias, const TensorBase& grad_out,
                                const TensorBase& input, const TensorBase& mean, const TensorBase& rstd,
                                const TensorBase& weight) {
  const char* op = "_group_norm_fused_backward";
  if (plan.C == 0) return;
  const int dev = input.device().index;
  detail::check_device(dev, op);
  const int64_t blocks = plan.N * plan.group;
  check_blocks(blocks, op);
  check_blocks(plan.C, op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* dy = static_cast<const T*>(grad_out.data_ptr());
      const T* x = static_cast<const T*>(input.data_ptr());
      const T* mu = static_cast<const T*>(mean.data_ptr());
      const T* rs = static_cast<const T*>(rstd.data_ptr());
      const int64_t D = plan.C / plan.group;
      if (blocks > 0 && D * plan.HxW > 0) {
        input_grad_kernel<T><<<unsigned(blocks), kThreads, 0, stream>>>(dy, x, mu, rs, ptr_or_null<T>(weight),
                                                                         static_cast<T*>(grad_input.data_ptr()),
                                                                         plan.group, D, plan.HxW);
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
      }
      // no samples or positions: the parameters' gradients are sums of nothing (0)
      param_grad_kernel<T><<<unsigned(plan.C), kThreads, 0, stream>>>(
          dy, x, mu, rs, static_cast<T*>(grad_weight.data_ptr()), static_cast<T*>(grad_bias.data_ptr()), plan.N,
          plan.C, plan.group, plan.HxW);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

}  // namespace kiln::cuda
