// Fused scaled dot-product attention on CUDA (kiln/meta/attention.h): the CPU kernel's online
// softmax with one thread per query row (its E-wide query and Ev-wide accumulator in registers,
// keys and values streamed through shared memory in tiles shared by the block's rows), so
// memory stays O(L * E). The backward recomputes probabilities from the saved logsumexp: one
// thread per key row sums dK and dV over the queries, one thread per query row sums dQ over the
// keys; each sum runs in a fixed order (no atomics), so results repeat bit for bit. 16-bit inputs
// accumulate in float32. A plain CUDA-core kernel, not yet FlashAttention's tensor-core tiling:
// head dims up to 256.
#include <cuda_runtime.h>
#include <limits>
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/kernels/cuda/_scaled_dot_product_attention_fused_backward.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kRows = 64;     // query (or key) rows per block, one per thread
constexpr int kMaxDim = 256;  // largest head dim (E and Ev)
// key rows per shared-memory tile: 32 KiB of keys and values at the largest head dim
template <typename C>
constexpr int kTile = sizeof(C) == 8 ? 8 : 16;

__device__ inline int64_t lmin(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename C>
__device__ C neg_inf() {
  return -std::numeric_limits<C>::infinity();
}

// The masked score of (i, j); `mask` points at batch entry b's mask (null: none).
template <typename T, typename C>
__device__ C masked(C s, int64_t i, int64_t j, bool causal, int mask_kind, const void* mask, int64_t sl, int64_t ss) {
  if (causal && j > i) return neg_inf<C>();
  if (mask_kind == 1) return static_cast<const bool*>(mask)[i * sl + j * ss] ? s : neg_inf<C>();
  if (mask_kind == 2) return s + C(static_cast<const T*>(mask)[i * sl + j * ss]);
  return s;
}

struct Args {
  int64_t L, S, E, Ev, sl, ss;
  double scale;
  bool causal;
  int mask_kind;  // 0 none, 1 bool, 2 additive
};

template <typename T, typename C>
__global__ void attention_forward(Args a, const T* q, const T* k, const T* v, const void* mask,
                                  const int64_t* mask_offsets, T* out, C* lse) {
  const int64_t b = blockIdx.y, i = int64_t(blockIdx.x) * kRows + threadIdx.x;
  const bool row = i < a.L;
  __shared__ C ks[kTile<C>][kMaxDim];
  __shared__ C vs[kTile<C>][kMaxDim];
  C qi[kMaxDim], acc[kMaxDim];
  const T* qb = q + b * a.L * a.E;
  for (int64_t e = 0; e < a.E; ++e) qi[e] = row ? C(qb[i * a.E + e]) : C(0);
  for (int64_t e = 0; e < a.Ev; ++e) acc[e] = C(0);
  const void* mb = nullptr;
  if (a.mask_kind == 1) mb = static_cast<const bool*>(mask) + mask_offsets[b];
  if (a.mask_kind == 2) mb = static_cast<const T*>(mask) + mask_offsets[b];
  C m = neg_inf<C>(), l = C(0);
  const int64_t block_last = lmin(int64_t(blockIdx.x) * kRows + kRows, a.L) - 1;
  const int64_t key_end = a.causal ? lmin(a.S, block_last + 1) : a.S;
  for (int64_t j0 = 0; j0 < key_end; j0 += kTile<C>) {
    const int64_t tile = lmin(int64_t(kTile<C>), key_end - j0);
    __syncthreads();
    for (int64_t x = threadIdx.x; x < tile * a.E; x += blockDim.x)
      ks[x / a.E][x % a.E] = C(k[(b * a.S + j0 + x / a.E) * a.E + x % a.E]);
    for (int64_t x = threadIdx.x; x < tile * a.Ev; x += blockDim.x)
      vs[x / a.Ev][x % a.Ev] = C(v[(b * a.S + j0 + x / a.Ev) * a.Ev + x % a.Ev]);
    __syncthreads();
    if (!row) continue;
    for (int64_t t = 0; t < tile; ++t) {
      C s = 0;
      for (int64_t e = 0; e < a.E; ++e) s += qi[e] * ks[t][e];
      s = masked<T, C>(s * C(a.scale), i, j0 + t, a.causal, a.mask_kind, mb, a.sl, a.ss);
      if (s == neg_inf<C>()) continue;
      const C m_new = max(m, s);
      const C correction = exp(m - m_new), p = exp(s - m_new);
      l = l * correction + p;
      for (int64_t e = 0; e < a.Ev; ++e) acc[e] = acc[e] * correction + p * vs[t][e];
      m = m_new;
    }
  }
  if (!row) return;
  const C norm = l > 0 ? C(1) / l : a.S == 0 ? C(0) : std::numeric_limits<C>::quiet_NaN();
  for (int64_t e = 0; e < a.Ev; ++e) out[(b * a.L + i) * a.Ev + e] = T(acc[e] * norm);
  lse[b * a.L + i] = l > 0 ? m + log(l) : neg_inf<C>();
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

// One thread per key row j: dV_j = sum_i P_ij dO_i, dK_j = scale sum_i dS_ij q_i.
template <typename T, typename C>
__global__ void attention_backward_kv(Args a, const T* q, const T* k, const T* v, const void* mask,
                                      const int64_t* mask_offsets, const T* dout, const C* lse, const C* delta, T* dk,
                                      T* dv) {
  const int64_t b = blockIdx.y, j = int64_t(blockIdx.x) * kRows + threadIdx.x;
  const bool row = j < a.S;
  C kj[kMaxDim], vj[kMaxDim], dkj[kMaxDim], dvj[kMaxDim];
  for (int64_t e = 0; e < a.E; ++e) kj[e] = row ? C(k[(b * a.S + j) * a.E + e]) : C(0), dkj[e] = 0;
  for (int64_t e = 0; e < a.Ev; ++e) vj[e] = row ? C(v[(b * a.S + j) * a.Ev + e]) : C(0), dvj[e] = 0;
  const void* mb = nullptr;
  if (a.mask_kind == 1) mb = static_cast<const bool*>(mask) + mask_offsets[b];
  if (a.mask_kind == 2) mb = static_cast<const T*>(mask) + mask_offsets[b];
  if (!row) return;
  for (int64_t i = a.causal ? j : 0; i < a.L; ++i) {
    const T* qi = q + (b * a.L + i) * a.E;
    const T* doi = dout + (b * a.L + i) * a.Ev;
    C s = 0;
    for (int64_t e = 0; e < a.E; ++e) s += C(qi[e]) * kj[e];
    s = masked<T, C>(s * C(a.scale), i, j, a.causal, a.mask_kind, mb, a.sl, a.ss);
    const C p = exp(s - lse[b * a.L + i]);
    C dp = 0;
    for (int64_t e = 0; e < a.Ev; ++e) {
      dvj[e] += p * C(doi[e]);
      dp += C(doi[e]) * vj[e];
    }
    const C ds = p * (dp - delta[b * a.L + i]) * C(a.scale);
    for (int64_t e = 0; e < a.E; ++e) dkj[e] += ds * C(qi[e]);
  }
  for (int64_t e = 0; e < a.E; ++e) dk[(b * a.S + j) * a.E + e] = T(dkj[e]);
  for (int64_t e = 0; e < a.Ev; ++e) dv[(b * a.S + j) * a.Ev + e] = T(dvj[e]);
}

// One thread per query row i: dQ_i = scale sum_j dS_ij k_j.
template <typename T, typename C>
__global__ void attention_backward_q(Args a, const T* q, const T* k, const T* v, const void* mask,
                                     const int64_t* mask_offsets, const T* dout, const C* lse, const C* delta, T* dq) {
  const int64_t b = blockIdx.y, i = int64_t(blockIdx.x) * kRows + threadIdx.x;
  if (i >= a.L) return;
  C qi[kMaxDim], doi[kMaxDim], dqi[kMaxDim];
  for (int64_t e = 0; e < a.E; ++e) qi[e] = C(q[(b * a.L + i) * a.E + e]), dqi[e] = 0;
  for (int64_t e = 0; e < a.Ev; ++e) doi[e] = C(dout[(b * a.L + i) * a.Ev + e]);
  const void* mb = nullptr;
  if (a.mask_kind == 1) mb = static_cast<const bool*>(mask) + mask_offsets[b];
  if (a.mask_kind == 2) mb = static_cast<const T*>(mask) + mask_offsets[b];
  const C lse_i = lse[b * a.L + i], delta_i = delta[b * a.L + i];
  const int64_t key_end = a.causal ? lmin(a.S, i + 1) : a.S;
  for (int64_t j = 0; j < key_end; ++j) {
    const T* kj = k + (b * a.S + j) * a.E;
    const T* vj = v + (b * a.S + j) * a.Ev;
    C s = 0, dp = 0;
    for (int64_t e = 0; e < a.E; ++e) s += qi[e] * C(kj[e]);
    s = masked<T, C>(s * C(a.scale), i, j, a.causal, a.mask_kind, mb, a.sl, a.ss);
    const C p = exp(s - lse_i);
    for (int64_t e = 0; e < a.Ev; ++e) dp += doi[e] * C(vj[e]);
    const C ds = p * (dp - delta_i) * C(a.scale);
    for (int64_t e = 0; e < a.E; ++e) dqi[e] += ds * C(kj[e]);
  }
  for (int64_t e = 0; e < a.E; ++e) dq[(b * a.L + i) * a.E + e] = T(dqi[e]);
}

Args args_of(const meta::AttentionPlan& p, const TensorBase& mask) {
  Args a{p.L, p.S, p.E, p.Ev, p.mask_stride_l, p.mask_stride_s, p.scale, p.is_causal, 0};
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

void check_dims(const meta::AttentionPlan& p, const char* op) {
  KILN_CHECK(p.E <= kMaxDim && p.Ev <= kMaxDim, NotImplementedError, op, "query", "head dims above ", kMaxDim,
             " on CUDA (got E=", p.E, ", Ev=", p.Ev, ")");
  KILN_CHECK(p.B <= 65535, NotImplementedError, op, "query", "more than 65535 batch entries on CUDA (got ", p.B, ")");
}

template <typename T>
const T* cptr(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

}  // namespace

void _scaled_dot_product_attention_fused(const meta::AttentionPlan& plan, const TensorBase& output,
                                         const TensorBase& logsumexp, const TensorBase& query, const TensorBase& key,
                                         const TensorBase& value, const TensorBase& attn_mask) {
  const char* op = "_scaled_dot_product_attention_fused";
  if (plan.B == 0 || plan.L == 0) return;
  check_dims(plan, op);
  const int dev = query.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  const TensorBase q = query.contiguous(), k = key.contiguous(), v = value.contiguous();
  const TensorBase offsets = device_offsets(plan, query.device(), op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const dim3 grid(unsigned((plan.L + kRows - 1) / kRows), unsigned(plan.B));
      attention_forward<T, C><<<grid, kRows, 0, stream>>>(args_of(plan, attn_mask), cptr<T>(q), cptr<T>(k), cptr<T>(v),
                                                          attn_mask.defined() ? attn_mask.data_ptr() : nullptr,
                                                          cptr<int64_t>(offsets), static_cast<T*>(output.data_ptr()),
                                                          static_cast<C*>(logsumexp.data_ptr()));
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
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
  check_dims(plan, op);
  const int dev = query.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  const TensorBase q = query.contiguous(), k = key.contiguous(), v = value.contiguous(), o = output.contiguous(),
                   dout = grad_out.contiguous();
  const TensorBase offsets = device_offsets(plan, query.device(), op);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      TensorBase lse = logsumexp.contiguous();
      if (lse.dtype() != dtype_of<C>) {  // a float32 logsumexp of float64 inputs
        lse = kiln::detail::empty_dense(logsumexp.sizes(), dtype_of<C>, logsumexp.device(), op);
        lse.copy_(logsumexp);
      }
      TensorBase delta = kiln::detail::empty_dense({plan.B * plan.L}, dtype_of<C>, query.device(), op);
      const Args a = args_of(plan, attn_mask);
      const void* mask = attn_mask.defined() ? attn_mask.data_ptr() : nullptr;
      if (plan.L > 0) {
        attention_delta<T, C><<<unsigned((plan.B * plan.L + 255) / 256), 256, 0, stream>>>(
            plan.B * plan.L, plan.Ev, cptr<T>(dout), cptr<T>(o), static_cast<C*>(delta.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
        attention_backward_q<T, C>
            <<<dim3(unsigned((plan.L + kRows - 1) / kRows), unsigned(plan.B)), kRows, 0, stream>>>(
                a, cptr<T>(q), cptr<T>(k), cptr<T>(v), mask, cptr<int64_t>(offsets), cptr<T>(dout), cptr<C>(lse),
                cptr<C>(delta), static_cast<T*>(grad_query.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
      }
      if (plan.S > 0) {
        attention_backward_kv<T, C>
            <<<dim3(unsigned((plan.S + kRows - 1) / kRows), unsigned(plan.B)), kRows, 0, stream>>>(
                a, cptr<T>(q), cptr<T>(k), cptr<T>(v), mask, cptr<int64_t>(offsets), cptr<T>(dout), cptr<C>(lse),
                cptr<C>(delta), static_cast<T*>(grad_key.data_ptr()), static_cast<T*>(grad_value.data_ptr()));
        KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
      }
    }
  });
}

}  // namespace kiln::cuda
