// Group norm's fused kernels on CPU (kiln/meta/normalization.h): an input of N * C * HxW values is
// N * group contiguous blocks, one per (sample, group), of D = C / group channels of HxW elements.
// Threads take whole blocks, so every sum runs in one fixed order (results do not depend on the
// thread count). Forward: a two-pass mean and biased variance per block in the compute dtype,
// then one pass writing x * scale[c] + shift[c], the affine step folded per channel (scale =
// rstd * weight, shift = bias - mean * scale). Backward: per block one pass for each channel's
// sum(dy) and sum(dy * (x - mean)), then one pass writing dx while the block is still in cache;
// the parameters' gradients sum those per-(sample, channel) pieces over the samples in order.
// A block is read from memory once (the later passes find it in cache), so the writes are half
// the traffic: an output of kStreamBytes or more, which no cache would keep for the next op, is
// written with non-temporal stores (AVX), which skip reading each line before it is overwritten.
// Both loops compute each element the same way (fused multiply-adds where the machine has them),
// so the choice does not change a bit of the result.
#include <algorithm>
#include <cmath>
#include <vector>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_group_norm_fused.h"
#include "kiln/gen/kernels/cpu/_group_norm_fused_backward.h"
#include "kernel_utils.h"
#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace kiln::cpu {
namespace {

constexpr int64_t kStreamBytes = int64_t(4) << 20;

// a * b + c, fused where the machine has FMA (vectorized loops and the AVX loop below agree)
template <typename T>
KILN_INLINE T madd(T a, T b, T c) {
#if defined(__FMA__)
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

#if defined(__AVX__)
template <typename T>
struct Avx;
template <>
struct Avx<float> {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  static V set1(float v) { return _mm256_set1_ps(v); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
#if defined(__FMA__)
  static V madd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
#else
  static V madd(V a, V b, V c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
#endif
  static void stream(float* p, V v) { _mm256_stream_ps(p, v); }
};
template <>
struct Avx<double> {
  using V = __m256d;
  static constexpr int64_t kLanes = 4;
  static V set1(double v) { return _mm256_set1_pd(v); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
#if defined(__FMA__)
  static V madd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
#else
  static V madd(V a, V b, V c) { return _mm256_add_pd(_mm256_mul_pd(a, b), c); }
#endif
  static void stream(double* p, V v) { _mm256_stream_pd(p, v); }
};
#endif

KILN_INLINE bool misaligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 31) != 0; }

// y = x * scale + shift along one channel's n elements; with `stream` (and AVX) the aligned middle
// is stored non-temporally (the caller fences).
template <typename T>
void affine_row(const T* x, T* y, int64_t n, T scale, T shift, bool stream) {
#if defined(__AVX__)
  if (stream) {
    using A = Avx<T>;
    const typename A::V vs = A::set1(scale), vb = A::set1(shift);
    int64_t j = 0;
    for (; j < n && misaligned(y + j); ++j) y[j] = madd(x[j], scale, shift);
    for (; j + A::kLanes <= n; j += A::kLanes) A::stream(y + j, A::madd(A::load(x + j), vs, vb));
    for (; j < n; ++j) y[j] = madd(x[j], scale, shift);
    return;
  }
#else
  (void)stream;
#endif
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = madd(x[j], scale, shift);
}

// dx = dy * scale + (x - mu) * k + shift along one channel's n elements, stored as affine_row's.
template <typename T>
void input_grad_row(const T* dy, const T* x, T* dx, int64_t n, T mu, T scale, T k, T shift, bool stream) {
#if defined(__AVX__)
  if (stream) {
    using A = Avx<T>;
    const typename A::V vmu = A::set1(mu), vs = A::set1(scale), vk = A::set1(k), vb = A::set1(shift);
    int64_t j = 0;
    for (; j < n && misaligned(dx + j); ++j) dx[j] = madd(dy[j], scale, madd(x[j] - mu, k, shift));
    for (; j + A::kLanes <= n; j += A::kLanes)
      A::stream(dx + j, A::madd(A::load(dy + j), vs, A::madd(A::sub(A::load(x + j), vmu), vk, vb)));
    for (; j < n; ++j) dx[j] = madd(dy[j], scale, madd(x[j] - mu, k, shift));
    return;
  }
#else
  (void)stream;
#endif
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) dx[j] = madd(dy[j], scale, madd(x[j] - mu, k, shift));
}

// Orders a thread's non-temporal stores before its later stores (each block ends with one).
KILN_INLINE void stream_fence(bool stream) {
#if defined(__AVX__)
  if (stream) _mm_sfence();
#else
  (void)stream;
#endif
}

// T is float or double (the registry's dtypes), its own compute dtype.
template <typename T>
void forward(const meta::GroupNormPlan& p, const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out) {
  using C = T;
  const int64_t blocks = p.N * p.group, D = p.C / p.group, HxW = p.HxW, count = D * HxW;
  const C eps = C(p.eps);
  const bool parallel = blocks > 1 && blocks * count >= kParallelGrain;
  const bool stream = blocks * count * int64_t(sizeof(T)) >= kStreamBytes;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < blocks; ++i) {
    const T* xb = x + i * count;
    T* yb = y + i * count;
    C mu, rs;
    mean_and_rstd(xb, count, eps, &mu, &rs);
    const int64_t c0 = (i % p.group) * D;  // the block's first channel
    for (int64_t d = 0; d < D; ++d) {
      const C scale = rs * (w ? C(w[c0 + d]) : C(1));
      const C shift = (b ? C(b[c0 + d]) : C(0)) - mu * scale;
      affine_row(xb + d * HxW, yb + d * HxW, HxW, scale, shift, stream);
    }
    stream_fence(stream);  // by the thread that stored, before the region's closing barrier
    mean_out[i] = T(mu);
    rstd_out[i] = T(rs);
  }
}

// Per block, with g = dy * w and xhat = (x - mean) * rstd:
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//    = dy * rstd * w[c] + (x - mean) * (-rstd^3 * sum(g * (x - mean)) / count) - rstd * sum(g) / count.
// dweight[c] = sum over n of sum(dy * (x - mean)) * rstd, dbias[c] = sum over n of sum(dy).
template <typename T>
void backward(const meta::GroupNormPlan& p, const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx,
              T* dw, T* db) {
  using C = T;
  const int64_t N = p.N, channels = p.C, G = p.group, blocks = N * G, D = channels / G, HxW = p.HxW,
                count = D * HxW;
  const bool stream = blocks * count * int64_t(sizeof(T)) >= kStreamBytes;
  // each (sample, channel)'s sum(dy) and sum(dy * (x - mean)), for the parameters' gradients
  std::vector<C> sum_dy(size_t(N * channels)), sum_dy_xmu(size_t(N * channels));
  const bool parallel = blocks > 1 && blocks * count >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t c0 = (i % G) * D, base = i * count;
    const C mu = C(mean[i]), rs = C(rstd[i]);
    C* sdy = sum_dy.data() + i * D;  // block i holds channels [i * D, (i + 1) * D) of [N * C]
    C* sdx = sum_dy_xmu.data() + i * D;
    C sum_g = 0, sum_g_xmu = 0;
    for (int64_t d = 0; d < D; ++d) {
      const T* dyp = dy + base + d * HxW;
      const T* xp = x + base + d * HxW;
      C a = 0, e = 0;
#pragma omp simd reduction(+ : a, e)
      for (int64_t j = 0; j < HxW; ++j) {
        a += C(dyp[j]);
        e += C(dyp[j]) * (C(xp[j]) - mu);
      }
      sdy[d] = a;
      sdx[d] = e;
      const C wc = w ? C(w[c0 + d]) : C(1);
      sum_g += a * wc;
      sum_g_xmu += e * wc;
    }
    if (count == 0) continue;
    const C k = -rs * rs * rs * sum_g_xmu / C(count), shift = -rs * sum_g / C(count);
    for (int64_t d = 0; d < D; ++d) {
      const C scale = rs * (w ? C(w[c0 + d]) : C(1));
      const T* dyp = dy + base + d * HxW;
      const T* xp = x + base + d * HxW;
      input_grad_row(dyp, xp, dx + base + d * HxW, HxW, mu, scale, k, shift, stream);
    }
    stream_fence(stream);
  }
  // the parameters' gradients: each channel sums its samples in order (an empty block adds 0,
  // not 0 * its NaN rstd)
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t g = c / D;
    C sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const size_t nc = size_t(n * channels + c);
      if (count > 0) sw += sum_dy_xmu[nc] * C(rstd[n * G + g]);
      sb += sum_dy[nc];
    }
    dw[c] = T(sw);
    db[c] = T(sb);
  }
}

}  // namespace

void _group_norm_fused(const meta::GroupNormPlan& plan, const TensorBase& output, const TensorBase& mean,
                       const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
                       const TensorBase& bias) {
  if (plan.N * plan.group == 0) return;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {  // the registry's dtypes
      forward<T>(plan, static_cast<const T*>(input.data_ptr()), ptr_or_null<T>(weight), ptr_or_null<T>(bias),
                 static_cast<T*>(output.data_ptr()), static_cast<T*>(mean.data_ptr()),
                 static_cast<T*>(rstd.data_ptr()));
    }
  });
}

void _group_norm_fused_backward(const meta::GroupNormPlan& plan, const TensorBase& grad_input,
                                const TensorBase& grad_weight, const TensorBase& grad_bias, const TensorBase& grad_out,
                                const TensorBase& input, const TensorBase& mean, const TensorBase& rstd,
                                const TensorBase& weight) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* dw = static_cast<T*>(grad_weight.data_ptr());
      T* db = static_cast<T*>(grad_bias.data_ptr());
      if (plan.N == 0) {  // no samples: the parameters' gradients are sums of nothing
        std::fill(dw, dw + plan.C, T(0));
        std::fill(db, db + plan.C, T(0));
        return;
      }
      if (plan.C == 0) return;
      backward<T>(plan, static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(input.data_ptr()),
                  static_cast<const T*>(mean.data_ptr()), static_cast<const T*>(rstd.data_ptr()),
                  ptr_or_null<T>(weight), static_cast<T*>(grad_input.data_ptr()), dw, db);
    }
  });
}

}  // namespace kiln::cpu
