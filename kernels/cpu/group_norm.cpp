// Group norm's fused kernels on CPU (kiln/meta/normalization.h): an input of N * C * HxW values is
// N * group contiguous blocks, one per (sample, group), of D = C / group channels of HxW elements.
// Threads take whole blocks, so every sum runs in one fixed order (results do not depend on the
// thread count). Forward: a two-pass mean and biased variance per block in the compute dtype
// (float for 16-bit floats), then one pass writing x * scale[c] + shift[c], the affine step folded
// per channel (scale = rstd * weight, shift = bias - mean * scale). Backward: per block one pass
// for each channel's sum(dy) and sum(dy * (x - mean)), then one pass writing dx while the block is
// still in cache; the parameters' gradients sum those per-(sample, channel) pieces over the
// samples in order.
#include <algorithm>
#include <cmath>
#include <vector>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_group_norm_fused.h"
#include "kiln/gen/kernels/cpu/_group_norm_fused_backward.h"
#include "kernel_utils.h"

namespace kiln::cpu {
namespace {

template <typename T>
const T* ptr_or_null(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

template <typename T, typename C = opmath_t<T>>
void forward(const meta::GroupNormPlan& p, const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out) {
  const int64_t blocks = p.N * p.group, D = p.C / p.group, HxW = p.HxW, count = D * HxW;
  const C eps = C(p.eps);
  const bool parallel = blocks > 1 && blocks * count >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < blocks; ++i) {
    const T* xb = x + i * count;
    T* yb = y + i * count;
    C s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < count; ++j) s += C(xb[j]);
    const C mu = count > 0 ? s / C(count) : C(0);  // no elements: mean 0, rstd NaN (0 / 0), as layer_norm's
    C q = 0;
#pragma omp simd reduction(+ : q)
    for (int64_t j = 0; j < count; ++j) {
      const C d = C(xb[j]) - mu;
      q += d * d;
    }
    const C rs = C(1) / std::sqrt(q / C(count) + eps);
    const int64_t c0 = (i % p.group) * D;  // the block's first channel
    for (int64_t d = 0; d < D; ++d) {
      const C scale = rs * (w ? C(w[c0 + d]) : C(1));
      const C shift = (b ? C(b[c0 + d]) : C(0)) - mu * scale;
      const T* xp = xb + d * HxW;
      T* yp = yb + d * HxW;
#pragma omp simd
      for (int64_t j = 0; j < HxW; ++j) yp[j] = T(C(xp[j]) * scale + shift);
    }
    mean_out[i] = T(mu);
    rstd_out[i] = T(rs);
  }
}

// Per block, with g = dy * w and xhat = (x - mean) * rstd:
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//    = dy * rstd * w[c] + (x - mean) * (-rstd^3 * sum(g * (x - mean)) / count) - rstd * sum(g) / count.
// dweight[c] = sum over n of sum(dy * (x - mean)) * rstd, dbias[c] = sum over n of sum(dy).
template <typename T, typename C = opmath_t<T>>
void backward(const meta::GroupNormPlan& p, const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx,
              T* dw, T* db) {
  const int64_t N = p.N, channels = p.C, G = p.group, blocks = N * G, D = channels / G, HxW = p.HxW,
                count = D * HxW;
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
      T* dxp = dx + base + d * HxW;
#pragma omp simd
      for (int64_t j = 0; j < HxW; ++j) dxp[j] = T(C(dyp[j]) * scale + (C(xp[j]) - mu) * k + shift);
    }
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
    if constexpr (is_floating(dtype_of<T>)) {  // the registry admits float32 and float64 only
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
    if constexpr (is_floating(dtype_of<T>)) {
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
