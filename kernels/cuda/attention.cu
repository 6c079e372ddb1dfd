// Fused scaled dot-product attention on CUDA (kiln/meta/attention.h), by chunks of query rows
// over cuBLAS: for each chunk, the scores Q_c K^T (one strided-batched product over the batch),
// then one block per row masks them, takes the row's logsumexp and turns them into
// probabilities in place, then O_c = P_c V. Only a chunk's scores exist at a time (kScoreBytes,
// or one row per batch entry where a single row is larger), so memory stays O(L * E) plus that
// bound; a causal chunk stops at its last row's key. The backward recomputes each chunk's
// probabilities from the saved logsumexp and adds the chunk's share of dK and dV with products
// in chunk order (no atomics: results repeat bit for bit). float32 products stay off TF32 unless
// kiln::cuda::set_allow_tf32(true), as for matmul. A query row whose keys are all masked gives
// NaN, its logsumexp -inf, as on the CPU. Dropout draws the CPU's mask (kiln/common/
// attention_dropout.h): the forward multiplies the probabilities by it before P V; the backward
// writes P * Z for dV and redraws Z in dS = P * (dP * Z - delta).
#include <cuda_runtime.h>
#include <algorithm>
#include <limits>
#include "gemm_into.h"
#include "kiln/common/attention_dropout.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused_backward.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;                      // per row of scores
constexpr int64_t kScoreBytes = int64_t(8) << 20;  // a chunk's scores (the backward keeps two)

template <typename C>
__device__ C neg_inf() {
  return -std::numeric_limits<C>::infinity();
}

struct Args {
  int64_t L, S, sl, ss;
  bool causal;
  int mask_kind;  // 0 none, 1 bool, 2 additive
  attention::Dropout drop;
};

// Probability (b, i, j)'s dropout factor (1 without dropout): its index in the [B, L, S] draw.
template <typename C>
__device__ C drop_factor(const Args& a, int64_t b, int64_t i, int64_t j) {
  return a.drop.factor<C>(uint64_t((b * a.L + i) * a.S + j));
}

// The masked score of (i, j); `mask` points at batch entry b's mask (null: none).
template <typename T, typename C>
__device__ C masked(C s, int64_t i, int64_t j, const Args& a, const void* mask) {
  if (a.causal && j > i) return neg_inf<C>();
  if (a.mask_kind == 1) return static_cast<const bool*>(mask)[i * a.sl + j * a.ss] ? s : neg_inf<C>();
  if (a.mask_kind == 2) return s + C(static_cast<const T*>(mask)[i * a.sl + j * a.ss]);
  return s;
}

// The block's reduction of each thread's v (max or sum); every thread gets the result.
template <typename C, bool kMax>
__device__ C block_reduce(C v, C* shared) {
  for (int o = 16; o > 0; o >>= 1) {
    const C w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? max(v, w) : v + w;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // `shared` may still be read from a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) v = kMax ? max(v, shared[w]) : v + shared[w];
  return v;
}

// One block per row r of a chunk's scores [B, rows, cols] (query q0 + r % rows of batch entry
// r / rows; already scaled): masks them and writes exp(s - logsumexp) in place. The forward
// (kForward) computes each row's logsumexp and stores it; the backward reads the saved one.
template <typename T, typename C, bool kForward>
__global__ void probabilities(Args a, int64_t q0, int64_t rows, int64_t cols, C* scores, const void* mask,
                              const int64_t* mask_offsets, C* lse) {
  __shared__ C shared[kThreads / 32];
  const int64_t r = blockIdx.x, b = r / rows, i = q0 + r % rows;
  C* s = scores + r * cols;
  const void* mb = nullptr;
  if (a.mask_kind == 1) mb = static_cast<const bool*>(mask) + mask_offsets[b];
  if (a.mask_kind == 2) mb = static_cast<const T*>(mask) + mask_offsets[b];
  C m = neg_inf<C>();
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) {
    const C x = masked<T, C>(s[j], i, j, a, mb);
    s[j] = x;
    m = max(m, x);
  }
  C row_lse;
  if constexpr (kForward) {
    m = block_reduce<C, true>(m, shared);
    C l = 0;
    if (m != neg_inf<C>())
      for (int64_t j = threadIdx.x; j < cols; j += kThreads) l += exp(s[j] - m);
    l = block_reduce<C, false>(l, shared);
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

Args args_of(const meta::AttentionPlan& p, const TensorBase& mask) {
  Args a{p.L, p.S, p.mask_stride_l, p.mask_stride_s, p.is_causal, 0,
         attention::Dropout::make(p.dropout_p, p.philox_seed, p.philox_offset)};
  if (mask.defined()) a.mask_kind = p.mask == meta::AttentionMask::Bool ? 1 : 2;
  return a;
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

}  // namespace

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
  const int64_t B = plan.B, L = plan.L, S = plan.S, E = plan.E, Ev = plan.Ev;
  const Args a = args_of(plan, attn_mask);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const int64_t chunk = chunk_rows(plan, sizeof(T));
      TensorBase scores = kiln::detail::empty_dense({B * chunk * S}, plan.dtype, query.device(), op);
      for (int64_t q0 = 0; q0 < L; q0 += chunk) {
        const int64_t rows = std::min(chunk, L - q0), cols = chunk_keys(plan, q0, rows);
        const TensorBase sc = mats(scores, B, rows, cols, rows * cols, cols, 1);
        gemm_into(sc, mats(q, B, rows, E, L * E, E, 1, q0 * E), mats(k, B, E, cols, S * E, 1, E), Scalar(plan.scale),
                  Scalar(0), op);
        probabilities<T, T, true><<<unsigned(B * rows), kThreads, 0, stream>>>(
            a, q0, rows, cols, static_cast<T*>(scores.data_ptr()), attn_mask.defined() ? attn_mask.data_ptr() : nullptr,
            cptr<int64_t>(offsets), static_cast<T*>(logsumexp.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        gemm_into(mats(output, B, rows, Ev, L * Ev, Ev, 1, q0 * Ev), sc, mats(v, B, cols, Ev, S * Ev, Ev, 1), Scalar(1),
                  Scalar(0), op);
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
  // dK and dV gather every chunk's share; keys no query sees keep 0
  if (grad_key.numel() > 0) grad_key.zero_();
  if (grad_value.numel() > 0) grad_value.zero_();
  if (plan.L == 0) return;
  if (plan.S == 0) {
    grad_query.zero_();
    return;
  }
  const TensorBase q = query.contiguous(), k = key.contiguous(), v = value.contiguous(), o = output.contiguous(),
                   dout = grad_out.contiguous();
  const TensorBase offsets = device_offsets(plan, query.device(), op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const int64_t B = plan.B, L = plan.L, S = plan.S, E = plan.E, Ev = plan.Ev;
  const Args a = args_of(plan, attn_mask);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      TensorBase lse = logsumexp.contiguous();
      if (lse.dtype() != plan.dtype) {  // a float32 logsumexp of float64 inputs
        lse = kiln::detail::empty_dense(logsumexp.sizes(), plan.dtype, logsumexp.device(), op);
        lse.copy_(logsumexp);
      }
      TensorBase delta = kiln::detail::empty_dense({B * L}, plan.dtype, query.device(), op);
      attention_delta<T, T><<<grid_for(B * L), kThreads, 0, stream>>>(B * L, Ev, cptr<T>(dout), cptr<T>(o),
                                                                      static_cast<T*>(delta.data_ptr()));
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
      const int64_t chunk = chunk_rows(plan, sizeof(T));
      TensorBase probs = kiln::detail::empty_dense({B * chunk * S}, plan.dtype, query.device(), op);
      TensorBase dprobs = kiln::detail::empty_dense({B * chunk * S}, plan.dtype, query.device(), op);
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
        probabilities<T, T, false><<<unsigned(B * rows), kThreads, 0, stream>>>(
            a, q0, rows, cols, static_cast<T*>(probs.data_ptr()), attn_mask.defined() ? attn_mask.data_ptr() : nullptr,
            cptr<int64_t>(offsets), static_cast<T*>(lse.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        // dV[:cols] += P^T dO_c (dropout: (P * Z)^T dO_c, P * Z in dprobs until dP overwrites it);
        // dP = dO_c V^T;  dS = P * (dP * Z - delta)
        const int64_t total = B * rows * cols;
        if (a.drop.active) {
          drop_probabilities<T><<<grid_for(total), kThreads, 0, stream>>>(a, total, q0, rows, cols, cptr<T>(probs),
                                                                          static_cast<T*>(dprobs.data_ptr()));
          KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        }
        gemm_into(mats(grad_value, B, cols, Ev, S * Ev, Ev, 1), a.drop.active ? dst : pt, doc, Scalar(1), Scalar(1),
                  op);
        gemm_into(ds, doc, mats(v, B, Ev, cols, S * Ev, 1, Ev), Scalar(1), Scalar(0), op);
        score_grad<T><<<grid_for(total), kThreads, 0, stream>>>(a, total, q0, rows, cols, cptr<T>(probs),
                                                                static_cast<T*>(dprobs.data_ptr()), cptr<T>(delta));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        // dQ_c = scale * dS K[:cols];  dK[:cols] += scale * dS^T Q_c
        gemm_into(mats(grad_query, B, rows, E, L * E, E, 1, q0 * E), ds, mats(k, B, cols, E, S * E, E, 1),
                  Scalar(plan.scale), Scalar(0), op);
        gemm_into(mats(grad_key, B, cols, E, S * E, E, 1), dst, qc, Scalar(plan.scale), Scalar(1), op);
      }
    }
  });
}

}  // namespace kiln::cuda
