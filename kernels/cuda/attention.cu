// Fused scaled dot-product attention on CUDA (kiln/meta/attention.h). float16 and bfloat16 run the
// tensor-core flash kernels (flash_attention.cu) where their tiles fit (E, Ev <= 128); the rest,
// and float32/float64, run by chunks of query rows over cuBLAS: for each chunk, the scores Q_c K^T
// (one strided-batched product over the batch), then one block per row masks them, takes the row's
// logsumexp and turns them into probabilities in place, then O_c = P_c V. Only a chunk's scores
// exist at a time (kScoreBytes, or one row per batch entry where a single row is larger), so memory
// stays O(L * E) plus that bound; a causal chunk stops at its last row's key. The backward
// recomputes each chunk's probabilities from the saved logsumexp and adds the chunk's share of dK
// and dV with products in chunk order (no atomics: results repeat bit for bit). float32 products
// stay off TF32 unless kiln::cuda::set_allow_tf32(true), as for matmul. A query row whose keys are
// all masked gives NaN, its logsumexp -inf, as on the CPU. Dropout draws the CPU's mask
// (kiln/common/attention_dropout.h): the forward multiplies the probabilities by it before P V;
// the backward writes P * Z for dV and redraws Z in dS = P * (dP * Z - delta).
#include <cuda_runtime.h>
#include <algorithm>
#include <limits>
#include "attention_args.cuh"
#include "block_reduce.cuh"
#include "flash_attention.h"
#include "gemm_into.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused_backward.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using attention_args::Args;
using attention_args::drop_factor;
using attention_args::masked;
using attention_args::neg_inf;

constexpr int kThreads = 256;                      // per row of scores
constexpr int64_t kScoreBytes = int64_t(8) << 20;  // a chunk's scores (the backward keeps two)

// One block per row r of a chunk's scores [B, rows, cols] (query q0 + r % rows of batch entry
// r / rows; already scaled): masks them and writes exp(s - logsumexp) in place. The forward
// (kForward) computes each row's logsumexp and stores it; the backward reads the saved one.
// M: an additive mask's element type (the inputs' dtype; C computes: float for 16-bit inputs).
template <typename M, typename C, bool kForward>
__global__ void probabilities(Args a, int64_t q0, int64_t rows, int64_t cols, C* scores, const void* mask,
                              const int64_t* mask_offsets, C* lse) {
  __shared__ C shared[kThreads / 32];
  const int64_t r = blockIdx.x, b = r / rows, i = q0 + r % rows;
  C* s = scores + r * cols;
  const void* mb = attention_args::mask_of<M>(a, mask, mask_offsets, b);
  C m = neg_inf<C>();
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    const C x = masked<M, C>(s[j], i, j, a, mb);
    s[j] = x;
    m = max(m, x);
  }
  C row_lse;
  if constexpr (kForward) {
    m = block_reduce<kThreads>(m, shared, neg_inf<C>(), BlockMax{});
    C l = 0;
    if (m != neg_inf<C>())
      for (int64_t j = threadIdx.x; j < cols; j += kThreads) l += exp(s[j] - m);
    l = block_sum<kThreads>(l, shared);
    row_lse = l > 0 ? m + log(l) : neg_inf<C>();
    if (threadIdx.x == 0) lse[b * a.L + i] = row_lse;
  } else {
    row_lse = lse[b * a.L + i];
  }
  // all keys masked: exp(-inf - -inf) is NaN, so the row's output is NaN, as the CPU's. The
  // forward drops here (the logsumexp keeps every key); the backward keeps P for dS.
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    const C pr = exp(s[j] - row_lse);
    s[j] = kForward ? pr * drop_factor<C>(a, b, i, j) : pr;
  }
}

// dropped = P * Z over a chunk [B, rows, cols] (the backward's dV = (P * Z)^T dO).
template <typename C>
__global__ void drop_probabilities(Args a, int64_t total, int64_t q0, int64_t rows, int64_t cols, const C* p,
                                   C* dropped) {
  for (int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; x < total; x += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = x / cols, b = r / rows, i = q0 + r % rows;
    dropped[x] = p[x] * drop_factor<C>(a, b, i, x % cols);
  }
}

// dS = P * (dP * Z - delta_i) over a chunk [B, rows, cols], into dp (Z = 1 without dropout).
template <typename C>
__global__ void score_grad(Args a, int64_t total, int64_t q0, int64_t rows, int64_t cols, const C* p, C* dp,
                           const C* delta) {
  for (int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; x < total; x += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = x / cols, b = r / rows, i = q0 + r % rows;
    dp[x] = p[x] * (dp[x] * drop_factor<C>(a, b, i, x % cols) - delta[b * a.L + i]);
  }
}

// delta[b, i] = rowsum(dO * O)
template <typename T, typename C>
__global__ void attention_delta(int64_t rows, int64_t Ev, const T* dout, const T* out, C* delta) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  C d = 0;
  for (int64_t e = 0; e < Ev; ++e) d += C(dout[r * Ev + e]) * C(out[r * Ev + e]);
  delta[r] = d;
}

// The plan's per-batch mask offsets on the device (an empty tensor without a mask).
TensorBase device_offsets(const meta::AttentionPlan& p, Device device, const char* op) {
  if (p.mask == meta::AttentionMask::None) return TensorBase();
  TensorBase host = kiln::detail::empty_dense({int64_t(p.mask_offsets.size())}, DType::Int64, kCPU, op);
  std::copy(p.mask_offsets.begin(), p.mask_offsets.end(), static_cast<int64_t*>(host.data_ptr()));
  return host.to(device);
}

template <typename T>
const T* cptr(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

unsigned grid_for(int64_t n) { return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(1) << 20)); }

// [B, rows, cols] matrices of t's storage: element (b, r, c) at offset + b * bs + r * rs + c * cs.
TensorBase mats(const TensorBase& t, int64_t B, int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs,
                int64_t offset = 0) {
  return t.as_strided_view({B, rows, cols}, {bs, rs, cs}, t.storage_offset() + offset);
}

// Query rows per chunk: as many as fit kScoreBytes of scores, at least one.
int64_t chunk_rows(const meta::AttentionPlan& p, size_t element) {
  const int64_t row_bytes = std::max<int64_t>(1, p.B * p.S * int64_t(element));
  return std::clamp<int64_t>(kScoreBytes / row_bytes, 1, std::max<int64_t>(p.L, 1));
}

// Keys a chunk of query rows [q0, q0 + rows) can see: a causal chunk stops at its last row.
int64_t chunk_keys(const meta::AttentionPlan& p, int64_t q0, int64_t rows) {
  return p.is_causal ? std::min(p.S, q0 + rows) : p.S;
}

// t as a dense tensor of dtype d (t itself when it already is one).
TensorBase dense_as(const TensorBase& t, DType d, const char* op) {
  if (t.dtype() == d) return t.contiguous();
  TensorBase r = kiln::detail::empty_dense(t.sizes(), d, t.device(), op);
  r.copy_(t);
  return r;
}

// The forward by chunks over cuBLAS, computing in C (dense q, k, v, output of dtype C; lse C).
template <typename M, typename C>
void chunked_forward(const meta::AttentionPlan& plan, const Args& a, const TensorBase& output, const TensorBase& lse,
                     const TensorBase& q, const TensorBase& k, const TensorBase& v, const TensorBase& attn_mask,
                     const TensorBase& offsets, cudaStream_t stream, const char* op) {
  const int64_t B = plan.B, L = plan.L, S = plan.S, E = plan.E, Ev = plan.Ev;
  const int64_t chunk = chunk_rows(plan, sizeof(C));
  TensorBase scores = kiln::detail::empty_dense({B * chunk * S}, dtype_of<C>, q.device(), op);
  for (int64_t q0 = 0; q0 < L; q0 += chunk) {
    const int64_t rows = std::min(chunk, L - q0), cols = chunk_keys(plan, q0, rows);
    const TensorBase sc = mats(scores, B, rows, cols, rows * cols, cols, 1);
    gemm_into(sc, mats(q, B, rows, E, L * E, E, 1, q0 * E), mats(k, B, E, cols, S * E, 1, E), Scalar(plan.scale),
              Scalar(0), op);
    probabilities<M, C, true><<<unsigned(B * rows), kThreads, 0, stream>>>(
        a, q0, rows, cols, static_cast<C*>(scores.data_ptr()), attn_mask.defined() ? attn_mask.data_ptr() : nullptr,
        cptr<int64_t>(offsets), static_cast<C*>(lse.data_ptr()));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    gemm_into(mats(output, B, rows, Ev, L * Ev, Ev, 1, q0 * Ev), sc, mats(v, B, cols, Ev, S * Ev, Ev, 1), Scalar(1),
              Scalar(0), op);
  }
}

// The backward by chunks, computing in C (dense inputs and gradients of dtype C; lse C).
template <typename M, typename C>
void chunked_backward(const meta::AttentionPlan& plan, const Args& a, const TensorBase& grad_query,
                      const TensorBase& grad_key, const TensorBase& grad_value, const TensorBase& dout,
                      const TensorBase& q, const TensorBase& k, const TensorBase& v, const TensorBase& o,
                      const TensorBase& lse, const TensorBase& attn_mask, const TensorBase& offsets,
                      cudaStream_t stream, const char* op) {
  const int64_t B = plan.B, L = plan.L, S = plan.S, E = plan.E, Ev = plan.Ev;
  // dK and dV gather every chunk's share; keys no query sees keep 0
  if (grad_key.numel() > 0) grad_key.zero_();
  if (grad_value.numel() > 0) grad_value.zero_();
  TensorBase delta = kiln::detail::empty_dense({B * L}, dtype_of<C>, q.device(), op);
  attention_delta<C, C><<<grid_for(B * L), kThreads, 0, stream>>>(B * L, Ev, cptr<C>(dout), cptr<C>(o),
                                                                  static_cast<C*>(delta.data_ptr()));
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  const int64_t chunk = chunk_rows(plan, sizeof(C));
  TensorBase probs = kiln::detail::empty_dense({B * chunk * S}, dtype_of<C>, q.device(), op);
  TensorBase dprobs = kiln::detail::empty_dense({B * chunk * S}, dtype_of<C>, q.device(), op);
  for (int64_t q0 = 0; q0 < L; q0 += chunk) {
    const int64_t rows = std::min(chunk, L - q0), cols = chunk_keys(plan, q0, rows);
    const TensorBase p = mats(probs, B, rows, cols, rows * cols, cols, 1);
    const TensorBase pt = mats(probs, B, cols, rows, rows * cols, 1, cols);
    const TensorBase ds = mats(dprobs, B, rows, cols, rows * cols, cols, 1);
    const TensorBase dst = mats(dprobs, B, cols, rows, rows * cols, 1, cols);
    const TensorBase qc = mats(q, B, rows, E, L * E, E, 1, q0 * E);
    const TensorBase doc = mats(dout, B, rows, Ev, L * Ev, Ev, 1, q0 * Ev);
    // P = exp(scale * Q_c K^T (masked) - logsumexp)
    gemm_into(p, qc, mats(k, B, E, cols, S * E, 1, E), Scalar(plan.scale), Scalar(0), op);
    probabilities<M, C, false><<<unsigned(B * rows), kThreads, 0, stream>>>(
        a, q0, rows, cols, static_cast<C*>(probs.data_ptr()), attn_mask.defined() ? attn_mask.data_ptr() : nullptr,
        cptr<int64_t>(offsets), static_cast<C*>(lse.data_ptr()));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    // dV[:cols] += P^T dO_c (dropout: (P * Z)^T dO_c, P * Z in dprobs until dP overwrites it);
    // dP = dO_c V^T;  dS = P * (dP * Z - delta)
    const int64_t total = B * rows * cols;
    if (a.drop.active) {
      drop_probabilities<C><<<grid_for(total), kThreads, 0, stream>>>(a, total, q0, rows, cols, cptr<C>(probs),
                                                                      static_cast<C*>(dprobs.data_ptr()));
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
    gemm_into(mats(grad_value, B, cols, Ev, S * Ev, Ev, 1), a.drop.active ? dst : pt, doc, Scalar(1), Scalar(1), op);
    gemm_into(ds, doc, mats(v, B, Ev, cols, S * Ev, 1, Ev), Scalar(1), Scalar(0), op);
    score_grad<C><<<grid_for(total), kThreads, 0, stream>>>(a, total, q0, rows, cols, cptr<C>(probs),
                                                            static_cast<C*>(dprobs.data_ptr()), cptr<C>(delta));
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    // dQ_c = scale * dS K[:cols];  dK[:cols] += scale * dS^T Q_c
    gemm_into(mats(grad_query, B, rows, E, L * E, E, 1, q0 * E), ds, mats(k, B, cols, E, S * E, E, 1),
              Scalar(plan.scale), Scalar(0), op);
    gemm_into(mats(grad_key, B, cols, E, S * E, E, 1), dst, qc, Scalar(plan.scale), Scalar(1), op);
  }
}

template <typename T>
constexpr bool is_16_bit_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// A result in dtype d: the output itself, or a dense buffer to copy into it afterwards.
TensorBase result_as(const TensorBase& out, DType d, const char* op) {
  return out.dtype() == d ? out : kiln::detail::empty_dense(out.sizes(), d, out.device(), op);
}

}  // namespace

// float32 and float64 run by chunks; float16 and bfloat16 on the tensor-core flash kernels
// (flash_attention.cu) where their tiles fit, else by chunks on float32 copies.
void _scaled_dot_product_attention_fused(const meta::AttentionPlan& plan, const TensorBase& output,
                                         const TensorBase& logsumexp, const TensorBase& query, const TensorBase& key,
                                         const TensorBase& value, const TensorBase& attn_mask) {
  const char* op = "_scaled_dot_product_attention_fused";
  if (plan.B == 0 || plan.L == 0) return;
  const int dev = query.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  if (plan.S == 0) {  // no keys: an empty sum, as the CPU's
    output.zero_();
    logsumexp.fill_(-std::numeric_limits<double>::infinity());
    return;
  }
  const TensorBase q = query.contiguous(), k = key.contiguous(), v = value.contiguous();
  const TensorBase offsets = device_offsets(plan, query.device(), op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const Args a = attention_args::args_of(plan, attn_mask);
  const void* mask = attn_mask.defined() ? attn_mask.data_ptr() : nullptr;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      chunked_forward<T, T>(plan, a, output, logsumexp, q, k, v, attn_mask, offsets, stream, op);
    } else if constexpr (is_16_bit_v<T>) {
      if (flash::forward_fits(plan, dev)) {
        flash::forward(plan, a, q, k, v, output, logsumexp, mask, cptr<int64_t>(offsets), stream, op);
      } else {
        const TensorBase out = result_as(output, DType::Float32, op);
        chunked_forward<T, float>(plan, a, out, logsumexp, dense_as(q, DType::Float32, op),
                                  dense_as(k, DType::Float32, op), dense_as(v, DType::Float32, op), attn_mask,
                                  offsets, stream, op);
        output.copy_(out);
      }
    }
  });
}

void _scaled_dot_product_attention_fused_backward(const meta::AttentionPlan& plan, const TensorBase& grad_query,
                                                  const TensorBase& grad_key, const TensorBase& grad_value,
                                                  const TensorBase& grad_out, const TensorBase& query,
                                                  const TensorBase& key, const TensorBase& value,
                                                  const TensorBase& attn_mask, const TensorBase& output,
                                                  const TensorBase& logsumexp) {
  const char* op = "_scaled_dot_product_attention_fused_backward";
  if (plan.B == 0) return;
  const int dev = query.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  if (plan.L == 0 || plan.S == 0) {  // keys no query sees, and queries with no keys, get 0
    for (const TensorBase* g : {&grad_query, &grad_key, &grad_value})
      if (g->numel() > 0) g->zero_();
    return;
  }
  const TensorBase q = query.contiguous(), k = key.contiguous(), v = value.contiguous(), o = output.contiguous(),
                   dout = grad_out.contiguous();
  const TensorBase offsets = device_offsets(plan, query.device(), op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const Args a = attention_args::args_of(plan, attn_mask);
  const void* mask = attn_mask.defined() ? attn_mask.data_ptr() : nullptr;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // a float32 logsumexp of float64 inputs computes in float64
      chunked_backward<T, T>(plan, a, grad_query, grad_key, grad_value, dout, q, k, v, o,
                             dense_as(logsumexp, plan.dtype, op), attn_mask, offsets, stream, op);
    } else if constexpr (is_16_bit_v<T>) {
      const TensorBase lse = logsumexp.contiguous();  // float32 (meta::attention_backward)
      if (flash::backward_fits(plan, dev)) {
        TensorBase delta = kiln::detail::empty_dense({plan.B * plan.L}, DType::Float32, query.device(), op);
        attention_delta<T, float><<<grid_for(plan.B * plan.L), kThreads, 0, stream>>>(
            plan.B * plan.L, plan.Ev, cptr<T>(dout), cptr<T>(o), static_cast<float*>(delta.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        flash::backward(plan, a, q, k, v, dout, lse, delta, grad_query, grad_key, grad_value, mask,
                        cptr<int64_t>(offsets), stream, op);
      } else {
        const DType f = DType::Float32;
        const TensorBase dq = result_as(grad_query, f, op), dk = result_as(grad_key, f, op),
                         dv = result_as(grad_value, f, op);
        chunked_backward<T, float>(plan, a, dq, dk, dv, dense_as(dout, f, op), dense_as(q, f, op),
                                   dense_as(k, f, op), dense_as(v, f, op), dense_as(o, f, op), dense_as(lse, f, op),
                                   attn_mask, offsets, stream, op);
        grad_query.copy_(dq);
        grad_key.copy_(dk);
        grad_value.copy_(dv);
      }
    }
  });
}

}  // namespace kiln::cuda
