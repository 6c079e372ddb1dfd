// Flash attention for float16 and bfloat16 on tensor cores: WMMA 16x16x16 products with float32
// accumulation, in FlashAttention-2's schedule. A block of 4 warps takes 64 query rows (16 per
// warp) and walks the keys in tiles of 64 with an online softmax: each warp's scores, running
// maximum and sum, and its output rows stay in float32 in shared memory; the probabilities are
// rounded to the input type for the P V product, as FlashAttention rounds them. Only tiles exist,
// so memory is O(L * E). The backward runs two kernels that recompute the probabilities from the
// saved logsumexp: one per key tile for dK and dV (walking the query tiles), one per query tile
// for dQ (walking the key tiles); no atomics, so results repeat bit for bit. Masking, causality
// and dropout follow attention_args.cuh, as the chunked path and the CPU kernel do; a query row
// whose keys are all masked gives NaN and a logsumexp of -inf, as theirs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include "flash_attention.h"
#include "kiln/common/flash_attention_tiles.h"
#include "kiln/cuda/check.h"

namespace kiln::cuda::flash {
namespace {

namespace wmma = nvcuda::wmma;
using attention_args::Args;
using attention_args::drop_factor;
using attention_args::masked;
using attention_args::neg_inf;

using flash_tiles::BackwardLayout;
using flash_tiles::ForwardLayout;
using flash_tiles::kThreads;
using flash_tiles::kTile;

template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <typename T, typename Layout>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, Layout>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// A warp's c[16][64] = a[16][depth] b^T, b holding 64 rows of depth (a tile times another
// tile's transpose): the scores Q K^T, or dP = dO V^T.
template <typename T>
__device__ void product_nt(const T* a, int lda, const T* b, int ldb, int depth, float* c, int ldc) {
  for (int n = 0; n < kTile; n += 16) {
    FragC acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < depth; k += 16) {
      FragA<T> fa;
      FragB<T, wmma::col_major> fb;  // b^T(e, c) = b[c * ldb + e]
      wmma::load_matrix_sync(fa, a + k, lda);
      wmma::load_matrix_sync(fb, b + n * ldb + k, ldb);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + n, acc, ldc, wmma::mem_row_major);
  }
}

// A warp's c[16][width] += a[16][64] b[64][width], c in float32 shared memory: P V, dS K, ...
template <typename T>
__device__ void product_nn_add(const T* a, int lda, const T* b, int ldb, int width, float* c, int ldc) {
  for (int n = 0; n < width; n += 16) {
    FragC acc;
    wmma::load_matrix_sync(acc, c + n, ldc, wmma::mem_row_major);
    for (int k = 0; k < kTile; k += 16) {
      FragA<T> fa;
      FragB<T, wmma::row_major> fb;
      wmma::load_matrix_sync(fa, a + k, lda);
      wmma::load_matrix_sync(fb, b + k * ldb + n, ldb);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(c + n, acc, ldc, wmma::mem_row_major);
  }
}

// Rows [first, first + kTile) of a dense [n, width] matrix into a [kTile][ld] tile of `padded`
// columns, zero past row n and column width (zeros add nothing to the products).
template <typename T>
__device__ void load_tile(T* tile, int ld, const T* src, int64_t first, int64_t n, int64_t width, int padded) {
  for (int x = threadIdx.x; x < kTile * padded; x += kThreads) {
    const int r = x / padded, c = x % padded;
    const int64_t row = first + r;
    tile[r * ld + c] = row < n && c < width ? src[row * width + c] : from_float<T>(0.0f);
  }
}

__device__ void zero(float* x, int count) {
  for (int i = threadIdx.x; i < count; i += kThreads) x[i] = 0.0f;
}

template <typename T>
struct Params {
  const T *q, *k, *v, *dout;
  T *out, *dq, *dk, *dv;
  float* lse;  // written by the forward, read by the backward
  const float* delta;
  const void* mask;
  const int64_t* mask_offsets;
  int64_t E, Ev;
  float scale;
};

template <typename T>
__device__ T* at(unsigned char* smem, size_t offset) {
  return reinterpret_cast<T*>(smem + offset);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) forward_kernel(Args a, Params<T> t, ForwardLayout f, int64_t q_tiles) {
  extern __shared__ __align__(128) unsigned char smem[];
  T *qs = at<T>(smem, f.q), *ks = at<T>(smem, f.k), *vs = at<T>(smem, f.v), *ps = at<T>(smem, f.p);
  float *ss = at<float>(smem, f.s), *os = at<float>(smem, f.o), *ms = at<float>(smem, f.m), *ls = at<float>(smem, f.l);
  const int ldq = f.w.qk(), ldv = f.w.vo(), lds = f.w.sq(), ldp = f.w.pr(), ldo = f.w.av();
  const int64_t b = blockIdx.x / q_tiles, q0 = blockIdx.x % q_tiles * kTile;
  const int lane = threadIdx.x % 32, r0 = 16 * (threadIdx.x / 32);
  const T *k = t.k + b * a.S * t.E, *v = t.v + b * a.S * t.Ev;
  const void* mask = attention_args::mask_of<T>(a, t.mask, t.mask_offsets, b);
  load_tile(qs, ldq, t.q + b * a.L * t.E, q0, a.L, t.E, f.w.ep);
  zero(os, kTile * ldo);
  if (threadIdx.x < kTile) {
    ms[threadIdx.x] = neg_inf<float>();
    ls[threadIdx.x] = 0.0f;
  }
  // a causal block's last row sees keys up to its own index
  const int64_t key_end = a.causal && q0 + kTile < a.S ? q0 + kTile : a.S;
  for (int64_t j0 = 0; j0 < key_end; j0 += kTile) {
    __syncthreads();  // every warp is done with the previous K and V tiles
    load_tile(ks, ldq, k, j0, a.S, t.E, f.w.ep);
    load_tile(vs, ldv, v, j0, a.S, t.Ev, f.w.evp);
    __syncthreads();
    product_nt(qs + r0 * ldq, ldq, ks, ldq, f.w.ep, ss + r0 * lds, lds);
    __syncwarp();
    for (int rr = 0; rr < 16; ++rr) {
      const int r = r0 + rr;
      const int64_t i = q0 + r;
      float s[2], row_max = neg_inf<float>();
      for (int h = 0; h < 2; ++h) {
        const int64_t j = j0 + lane + 32 * h;
        s[h] = i < a.L && j < a.S ? masked<T, float>(ss[r * lds + lane + 32 * h] * t.scale, i, j, a, mask)
                                  : neg_inf<float>();
        row_max = fmaxf(row_max, s[h]);
      }
      const float m_old = ms[r], m_new = fmaxf(m_old, warp_max(row_max));
      // nothing seen yet (m_new = -inf): no probabilities, and the running sums stay as they are
      const float alpha = m_new == neg_inf<float>() ? 1.0f : expf(m_old - m_new);
      float sum = 0.0f;
      for (int h = 0; h < 2; ++h) {
        const int c = lane + 32 * h;
        const float pr = m_new == neg_inf<float>() ? 0.0f : expf(s[h] - m_new);
        sum += pr;  // the normalizer keeps every probability; P V takes the dropped ones
        ps[r * ldp + c] = from_float<T>(pr * drop_factor<float>(a, b, i, j0 + c));
      }
      sum = warp_sum(sum);
      for (int e = lane; e < f.w.evp; e += 32) os[r * ldo + e] *= alpha;
      __syncwarp();  // every lane has read ms[r]
      if (lane == 0) {
        ms[r] = m_new;
        ls[r] = ls[r] * alpha + sum;
      }
    }
    __syncwarp();
    product_nn_add(ps + r0 * ldp, ldp, vs, ldv, f.w.evp, os + r0 * ldo, ldo);
  }
  __syncthreads();
  for (int rr = 0; rr < 16; ++rr) {
    const int r = r0 + rr;
    const int64_t i = q0 + r;
    if (i >= a.L) break;
    const float l = ls[r], inv = 1.0f / l;  // no key seen: 0 * inf, NaN as the CPU's
    T* out = t.out + (b * a.L + i) * t.Ev;
    for (int e = lane; e < t.Ev; e += 32) out[e] = from_float<T>(os[r * ldo + e] * inv);
    if (lane == 0) t.lse[b * a.L + i] = l > 0 ? ms[r] + logf(l) : neg_inf<float>();
  }
}

// P and dS of a warp's 16 rows against a tile of 64 columns, from the float32 scores `ss` and
// dP `dps` the products left: P = exp(masked(scale * s) - lse) (times the dropout factor for
// the dV product), dS = P * (dP * Z - delta). kKeyRows: the rows are keys and the columns
// queries (the dK/dV kernel's transposed view), else rows are queries.
template <typename T, bool kKeyRows>
__device__ void probabilities_and_grads(const Args& a, const Params<T>& t, const void* mask, int64_t b,
                                        int64_t row0, int64_t col0, const float* ss, const float* dps, int ldsq,
                                        T* ps, T* dss, int ldp, const float* lse, const float* delta) {
  const int lane = threadIdx.x % 32;
  for (int rr = 0; rr < 16; ++rr)
    for (int h = 0; h < 2; ++h) {
      const int c = lane + 32 * h;
      const int x = rr * ldsq + c;
      const int64_t i = kKeyRows ? col0 + c : row0 + rr, j = kKeyRows ? row0 + rr : col0 + c;
      const int qi = kKeyRows ? c : rr;  // the query's place in lse and delta
      float pr = 0.0f, ds = 0.0f, z = 1.0f;
      if (i < a.L && j < a.S) {
        pr = expf(masked<T, float>(ss[x] * t.scale, i, j, a, mask) - lse[qi]);
        z = drop_factor<float>(a, b, i, j);
        ds = pr * (dps[x] * z - delta[qi]);
      }
      if (ps) ps[rr * ldp + c] = from_float<T>(pr * z);
      dss[rr * ldp + c] = from_float<T>(ds);
    }
}

// dK and dV of 64 keys (16 per warp): each query tile's P^T and dS^T come from K Q^T and V dO^T,
// then dV += (P * Z)^T dO and dK += dS^T Q; dK is scaled once at the end.
template <typename T>
__global__ void __launch_bounds__(kThreads) key_grads_kernel(Args a, Params<T> t, BackwardLayout f, int64_t k_tiles) {
  extern __shared__ __align__(128) unsigned char smem[];
  T *qs = at<T>(smem, f.q), *dos = at<T>(smem, f.dout), *ks = at<T>(smem, f.k), *vs = at<T>(smem, f.v);
  T *ps = at<T>(smem, f.p), *dss = at<T>(smem, f.ds);
  float *ss = at<float>(smem, f.s), *dps = at<float>(smem, f.dp), *dks = at<float>(smem, f.acc_e),
        *dvs = at<float>(smem, f.acc_v), *lse = at<float>(smem, f.lse), *delta = at<float>(smem, f.delta);
  const int ldq = f.w.qk(), ldv = f.w.vo(), lds = f.w.sq(), ldp = f.w.pr(), lde = f.w.ae(), ldav = f.w.av();
  const int64_t b = blockIdx.x / k_tiles, k0 = blockIdx.x % k_tiles * kTile;
  const int lane = threadIdx.x % 32, r0 = 16 * (threadIdx.x / 32);
  const T *q = t.q + b * a.L * t.E, *dout = t.dout + b * a.L * t.Ev;
  const void* mask = attention_args::mask_of<T>(a, t.mask, t.mask_offsets, b);
  load_tile(ks, ldq, t.k + b * a.S * t.E, k0, a.S, t.E, f.w.ep);
  load_tile(vs, ldv, t.v + b * a.S * t.Ev, k0, a.S, t.Ev, f.w.evp);
  zero(dks, kTile * lde);
  zero(dvs, kTile * ldav);
  // a causal key j is seen by queries i >= j only
  for (int64_t q0 = a.causal ? k0 : 0; q0 < a.L; q0 += kTile) {
    __syncthreads();  // every warp is done with the previous query tile
    load_tile(qs, ldq, q, q0, a.L, t.E, f.w.ep);
    load_tile(dos, ldv, dout, q0, a.L, t.Ev, f.w.evp);
    if (threadIdx.x < kTile) {
      const int64_t i = q0 + threadIdx.x;
      lse[threadIdx.x] = i < a.L ? t.lse[b * a.L + i] : 0.0f;
      delta[threadIdx.x] = i < a.L ? t.delta[b * a.L + i] : 0.0f;
    }
    __syncthreads();
    product_nt(ks + r0 * ldq, ldq, qs, ldq, f.w.ep, ss + r0 * lds, lds);     // S^T = K Q^T
    product_nt(vs + r0 * ldv, ldv, dos, ldv, f.w.evp, dps + r0 * lds, lds);  // dP^T = V dO^T
    __syncwarp();
    probabilities_and_grads<T, true>(a, t, mask, b, k0 + r0, q0, ss + r0 * lds, dps + r0 * lds, lds, ps + r0 * ldp,
                                     dss + r0 * ldp, ldp, lse, delta);
    __syncwarp();
    product_nn_add(ps + r0 * ldp, ldp, dos, ldv, f.w.evp, dvs + r0 * ldav, ldav);  // dV += (P Z)^T dO
    product_nn_add(dss + r0 * ldp, ldp, qs, ldq, f.w.ep, dks + r0 * lde, lde);     // dK += dS^T Q
  }
  __syncthreads();  // causal keys past the last query see no tile: their zeros came from every thread
  for (int rr = 0; rr < 16; ++rr) {
    const int64_t j = k0 + r0 + rr;
    if (j >= a.S) break;
    T *dk = t.dk + (b * a.S + j) * t.E, *dv = t.dv + (b * a.S + j) * t.Ev;
    for (int e = lane; e < t.E; e += 32) dk[e] = from_float<T>(dks[(r0 + rr) * lde + e] * t.scale);
    for (int e = lane; e < t.Ev; e += 32) dv[e] = from_float<T>(dvs[(r0 + rr) * ldav + e]);
  }
}

// dQ of 64 query rows (16 per warp): each key tile's P and dS come from Q K^T and dO V^T, then
// dQ += dS K, scaled once at the end.
template <typename T>
__global__ void __launch_bounds__(kThreads) query_grads_kernel(Args a, Params<T> t, BackwardLayout f, int64_t q_tiles) {
  extern __shared__ __align__(128) unsigned char smem[];
  T *qs = at<T>(smem, f.q), *dos = at<T>(smem, f.dout), *ks = at<T>(smem, f.k), *vs = at<T>(smem, f.v);
  T* dss = at<T>(smem, f.ds);
  float *ss = at<float>(smem, f.s), *dps = at<float>(smem, f.dp), *dqs = at<float>(smem, f.acc_e),
        *lse = at<float>(smem, f.lse), *delta = at<float>(smem, f.delta);
  const int ldq = f.w.qk(), ldv = f.w.vo(), lds = f.w.sq(), ldp = f.w.pr(), lde = f.w.ae();
  const int64_t b = blockIdx.x / q_tiles, q0 = blockIdx.x % q_tiles * kTile;
  const int lane = threadIdx.x % 32, r0 = 16 * (threadIdx.x / 32);
  const T *k = t.k + b * a.S * t.E, *v = t.v + b * a.S * t.Ev;
  const void* mask = attention_args::mask_of<T>(a, t.mask, t.mask_offsets, b);
  load_tile(qs, ldq, t.q + b * a.L * t.E, q0, a.L, t.E, f.w.ep);
  load_tile(dos, ldv, t.dout + b * a.L * t.Ev, q0, a.L, t.Ev, f.w.evp);
  zero(dqs, kTile * lde);
  if (threadIdx.x < kTile) {
    const int64_t i = q0 + threadIdx.x;
    lse[threadIdx.x] = i < a.L ? t.lse[b * a.L + i] : 0.0f;
    delta[threadIdx.x] = i < a.L ? t.delta[b * a.L + i] : 0.0f;
  }
  const int64_t key_end = a.causal && q0 + kTile < a.S ? q0 + kTile : a.S;
  for (int64_t j0 = 0; j0 < key_end; j0 += kTile) {
    __syncthreads();
    load_tile(ks, ldq, k, j0, a.S, t.E, f.w.ep);
    load_tile(vs, ldv, v, j0, a.S, t.Ev, f.w.evp);
    __syncthreads();
    product_nt(qs + r0 * ldq, ldq, ks, ldq, f.w.ep, ss + r0 * lds, lds);     // S = Q K^T
    product_nt(dos + r0 * ldv, ldv, vs, ldv, f.w.evp, dps + r0 * lds, lds);  // dP = dO V^T
    __syncwarp();
    probabilities_and_grads<T, false>(a, t, mask, b, q0 + r0, j0, ss + r0 * lds, dps + r0 * lds, lds, nullptr,
                                      dss + r0 * ldp, ldp, lse + r0, delta + r0);
    __syncwarp();
    product_nn_add(dss + r0 * ldp, ldp, ks, ldq, f.w.ep, dqs + r0 * lde, lde);  // dQ += dS K
  }
  __syncthreads();
  for (int rr = 0; rr < 16; ++rr) {
    const int64_t i = q0 + r0 + rr;
    if (i >= a.L) break;
    T* dq = t.dq + (b * a.L + i) * t.E;
    for (int e = lane; e < t.E; e += 32) dq[e] = from_float<T>(dqs[(r0 + rr) * lde + e] * t.scale);
  }
}

// Whether a 16-bit plan's tiles fit the shared memory a block may opt into on `device`.
bool fits(const meta::AttentionPlan& plan, int device, size_t bytes) {
  if (plan.dtype != DType::Float16 && plan.dtype != DType::BFloat16) return false;
  int limit = 0;
  if (cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return flash_tiles::fits(plan.E, plan.Ev, bytes, size_t(limit));
}

int64_t tiles(int64_t n) { return (n + kTile - 1) / kTile; }

template <typename T, typename Layout>
void launch(void (*kernel)(Args, Params<T>, Layout, int64_t), int64_t blocks, size_t bytes, cudaStream_t stream,
            const char* op, const Args& a, const Params<T>& t, const Layout& layout, int64_t per_batch) {
  KILN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), op,
                  "shared memory");
  kernel<<<unsigned(blocks), kThreads, bytes, stream>>>(a, t, layout, per_batch);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

template <typename T>
T* ptr(const TensorBase& x) {
  return x.defined() ? static_cast<T*>(x.data_ptr()) : nullptr;
}

// fn(tag) with the CUDA 16-bit type of the plan's dtype.
template <typename Fn>
void with_type(DType d, const Fn& fn) {
  if (d == DType::Float16) fn(__half());
  else fn(__nv_bfloat16());
}

}  // namespace

bool forward_fits(const meta::AttentionPlan& plan, int device) {
  return fits(plan, device, flash_tiles::forward_layout(plan.E, plan.Ev).bytes);
}

bool backward_fits(const meta::AttentionPlan& plan, int device) {
  return fits(plan, device, flash_tiles::backward_layout(plan.E, plan.Ev).bytes);
}

void forward(const meta::AttentionPlan& plan, const Args& a, const TensorBase& q, const TensorBase& k,
             const TensorBase& v, const TensorBase& out, const TensorBase& lse, const void* mask,
             const int64_t* mask_offsets, cudaStream_t stream, const char* op) {
  with_type(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const Params<T> t{ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), nullptr, ptr<T>(out), nullptr, nullptr,
                      nullptr, ptr<float>(lse), nullptr, mask, mask_offsets, plan.E, plan.Ev, float(plan.scale)};
    const ForwardLayout f = flash_tiles::forward_layout(plan.E, plan.Ev);
    const int64_t q_tiles = tiles(plan.L);
    launch(forward_kernel<T>, plan.B * q_tiles, f.bytes, stream, op, a, t, f, q_tiles);
  });
}

void backward(const meta::AttentionPlan& plan, const Args& a, const TensorBase& q, const TensorBase& k,
              const TensorBase& v, const TensorBase& dout, const TensorBase& lse, const TensorBase& delta,
              const TensorBase& dq, const TensorBase& dk, const TensorBase& dv, const void* mask,
              const int64_t* mask_offsets, cudaStream_t stream, const char* op) {
  with_type(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const Params<T> t{ptr<const T>(q),   ptr<const T>(k), ptr<const T>(v), ptr<const T>(dout),
                      nullptr,           ptr<T>(dq),      ptr<T>(dk),      ptr<T>(dv),
                      ptr<float>(lse),   ptr<const float>(delta),          mask,
                      mask_offsets,      plan.E,          plan.Ev,         float(plan.scale)};
    const BackwardLayout f = flash_tiles::backward_layout(plan.E, plan.Ev);
    const int64_t k_tiles = tiles(plan.S), q_tiles = tiles(plan.L);
    launch(key_grads_kernel<T>, plan.B * k_tiles, f.bytes, stream, op, a, t, f, k_tiles);
    launch(query_grads_kernel<T>, plan.B * q_tiles, f.bytes, stream, op, a, t, f, q_tiles);
  });
}

}  // namespace kiln::cuda::flash
