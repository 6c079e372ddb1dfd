// native_layer_norm and its backward on CUDA, over the meta step's M rows of N contiguous elements
// (kiln/meta/normalization.h), in float for 16-bit inputs (double for double).
// Forward: a block per row; the row's sum, then its sum of squared deviations (two passes over a
// row that stays in L1/L2, as the CPU kernel, so a large mean costs no precision), then the writes.
// Backward: a block per row for the input's gradient; grad_weight and grad_bias sum dy * xhat and
// dy over the rows: a grid of (column tiles x row chunks) writes partial sums, and a second kernel
// adds the chunks in order (deterministic; no atomics).
#include <cuda_runtime.h>
#include <algorithm>
#include <type_traits>
#include "kiln/gen/kernels/cuda/native_layer_norm.h"
#include "kiln/gen/kernels/cuda/native_layer_norm_backward.h"
#include "block_reduce.cuh"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/kernel/optional_operand.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using ::kiln::detail::ptr_or_null;
template <typename T>
using norm_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <typename T>
__global__ void layer_norm_kernel(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t N, double eps) {
  using Acc = norm_acc_t<T>;
  __shared__ Acc shared[kWarps];
  const int64_t r = blockIdx.x;
  const T* xr = x + r * N;
  T* yr = y + r * N;
  Acc s = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) s += Acc(xr[i]);
  // an empty row: mean 0, rstd NaN (PyTorch's)
  const Acc mu = N > 0 ? block_sum<kThreads>(s, shared) / Acc(N) : Acc(0);
  Acc q = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const Acc d = Acc(xr[i]) - mu;
    q += d * d;
  }
  const Acc rs = Acc(1) / sqrt(block_sum<kThreads>(q, shared) / Acc(N) + Acc(eps));
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    Acc v = (Acc(xr[i]) - mu) * rs;
    if (w) v *= Acc(w[i]);
    if (b) v += Acc(b[i]);
    yr[i] = T(v);
  }
  if (threadIdx.x == 0) {
    mean[r] = T(mu);
    rstd[r] = T(rs);
  }
}

template <typename T>
__global__ void layer_norm_grad_input_kernel(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx,
                                             int64_t N) {
  using Acc = norm_acc_t<T>;
  __shared__ Acc shared[kWarps];
  const int64_t r = blockIdx.x;
  const T* dyr = dy + r * N;
  const T* xr = x + r * N;
  const Acc mu = Acc(mean[r]), rs = Acc(rstd[r]);
  Acc sg = 0, sgx = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const Acc g = Acc(dyr[i]) * (w ? Acc(w[i]) : Acc(1));
    sg += g;
    sgx += g * (Acc(xr[i]) - mu) * rs;
  }
  const Acc a = block_sum<kThreads>(sg, shared) / Acc(N);
  const Acc c = block_sum<kThreads>(sgx, shared) / Acc(N);
  T* dxr = dx + r * N;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const Acc g = Acc(dyr[i]) * (w ? Acc(w[i]) : Acc(1));
    dxr[i] = T(rs * (g - a - (Acc(xr[i]) - mu) * rs * c));
  }
}

// partial[chunk][0 / 1][i]: the sums of dy * xhat and dy of column i over the chunk's rows.
template <typename T>
__global__ void layer_norm_grad_params_partial(const T* dy, const T* x, const T* mean, const T* rstd,
                                               norm_acc_t<T>* partial, int64_t M, int64_t N, int64_t rows_per_chunk) {
  using Acc = norm_acc_t<T>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const int64_t begin = int64_t(blockIdx.y) * rows_per_chunk, end = min(M, begin + rows_per_chunk);
  Acc sw = 0, sb = 0;
  for (int64_t r = begin; r < end; ++r) {
    const Acc g = Acc(dy[r * N + i]);
    sw += g * (Acc(x[r * N + i]) - Acc(mean[r])) * Acc(rstd[r]);
    sb += g;
  }
  partial[(int64_t(blockIdx.y) * 2) * N + i] = sw;
  partial[(int64_t(blockIdx.y) * 2 + 1) * N + i] = sb;
}

template <typename T>
__global__ void layer_norm_grad_params_finish(const norm_acc_t<T>* partial, T* dw, T* db, int64_t N, int64_t chunks) {
  using Acc = norm_acc_t<T>;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  Acc sw = 0, sb = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    sw += partial[(c * 2) * N + i];
    sb += partial[(c * 2 + 1) * N + i];
  }
  dw[i] = T(sw);
  db[i] = T(sb);
}

unsigned blocks_for(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace

void native_layer_norm(const meta::LayerNormPlan& plan, const TensorBase& output, const TensorBase& mean,
                       const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
                       const TensorBase& bias) {
  if (plan.M == 0) return;
  const int dev = input.device().index;
  detail::check_device(dev, "native_layer_norm");
  KILN_CHECK(plan.M <= 0x7fffffff, NotImplementedError, "native_layer_norm", "input",
             "more than 2^31 - 1 rows on CUDA (got ", plan.M, ")");
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      layer_norm_kernel<T><<<unsigned(plan.M), kThreads, 0, detail::current_cuda_stream(dev)>>>(
          static_cast<const T*>(input.data_ptr()), ptr_or_null<T>(weight), ptr_or_null<T>(bias),
          static_cast<T*>(output.data_ptr()), static_cast<T*>(mean.data_ptr()), static_cast<T*>(rstd.data_ptr()),
          plan.N, plan.eps);
      KILN_CUDA_CHECK(cudaGetLastError(), "native_layer_norm", "kernel launch");
    }
  });
}

void native_layer_norm_backward(const meta::LayerNormPlan& plan, const TensorBase& grad_input,
                                const TensorBase& grad_weight, const TensorBase& grad_bias, const TensorBase& grad_out,
                                const TensorBase& input, const TensorBase& mean, const TensorBase& rstd,
                                const TensorBase& weight, const TensorBase& /*bias*/) {
  if (plan.N == 0) return;
  const int dev = input.device().index;
  detail::check_device(dev, "native_layer_norm_backward");
  KILN_CHECK(plan.M <= 0x7fffffff, NotImplementedError, "native_layer_norm_backward", "input",
             "more than 2^31 - 1 rows on CUDA (got ", plan.M, ")");
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using Acc = norm_acc_t<T>;
      const T* dy = static_cast<const T*>(grad_out.data_ptr());
      const T* x = static_cast<const T*>(input.data_ptr());
      const T* mu = static_cast<const T*>(mean.data_ptr());
      const T* rs = static_cast<const T*>(rstd.data_ptr());
      if (plan.M > 0) {
        layer_norm_grad_input_kernel<T><<<unsigned(plan.M), kThreads, 0, stream>>>(
            dy, x, mu, rs, ptr_or_null<T>(weight), static_cast<T*>(grad_input.data_ptr()), plan.N);
        KILN_CUDA_CHECK(cudaGetLastError(), "native_layer_norm_backward", "kernel launch");
      }
      // enough row chunks to fill the device when there are few columns, each of >= 32 rows
      const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>((plan.M + 31) / 32, 64));
      const int64_t rows_per_chunk = (plan.M + chunks - 1) / chunks;
      const TensorBase partial =
          kiln::detail::empty_dense({chunks * 2 * plan.N}, TensorOptions(dtype_of<Acc>, input.device()));
      const dim3 grid(blocks_for(plan.N, kThreads), unsigned(chunks));
      layer_norm_grad_params_partial<T><<<grid, kThreads, 0, stream>>>(
          dy, x, mu, rs, static_cast<Acc*>(partial.data_ptr()), plan.M, plan.N, std::max<int64_t>(rows_per_chunk, 1));
      KILN_CUDA_CHECK(cudaGetLastError(), "native_layer_norm_backward", "kernel launch");
      layer_norm_grad_params_finish<T><<<blocks_for(plan.N, kThreads), kThreads, 0, stream>>>(
          static_cast<const Acc*>(partial.data_ptr()), static_cast<T*>(grad_weight.data_ptr()),
          static_cast<T*>(grad_bias.data_ptr()), plan.N, chunks);
      KILN_CUDA_CHECK(cudaGetLastError(), "native_layer_norm_backward", "kernel launch");
    }
  });
}

}  // namespace kiln::cuda
