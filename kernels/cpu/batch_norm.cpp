// Batch norm's training kernels on CPU (kiln/meta/normalization.h): an input [N, C, *] is N * C
// contiguous planes of HW elements, and each channel's statistics gather its N planes. Threads
// take whole channels, so every sum runs in one fixed order (results do not depend on the thread
// count). Forward: a two-pass mean and biased variance in the compute dtype (float for 16-bit
// floats), then one pass writing (x - mean) * invstd * weight + bias. Backward: one pass for
// sum(dy) and sum(dy * (x - mean)), one writing dx; the parameters' gradients fall out of the sums.
#include <cmath>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_batch_norm_training.h"
#include "kiln/gen/kernels/cpu/_batch_norm_training_backward.h"
#include "kernel_utils.h"

namespace kiln::cpu {
namespace {

template <typename T, typename C = opmath_t<T>>
void forward(const meta::BatchNormPlan& p, const T* x, const T* w, const T* b, T* y, C* mean_out, C* invstd_out) {
  const int64_t N = p.N, channels = p.C, HW = p.HW, count = N * HW;
  const C eps = C(p.eps);
  const bool parallel = channels > 1 && channels * count >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t c = 0; c < channels; ++c) {
    C s = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* xp = x + (n * channels + c) * HW;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < HW; ++i) s += C(xp[i]);
    }
    const C mu = count > 0 ? s / C(count) : C(0);  // no elements: mean 0, invstd NaN (0 / 0)
    C q = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* xp = x + (n * channels + c) * HW;
#pragma omp simd reduction(+ : q)
      for (int64_t i = 0; i < HW; ++i) {
        const C d = C(xp[i]) - mu;
        q += d * d;
      }
    }
    const C invstd = C(1) / std::sqrt(q / C(count) + eps);
    const C scale = invstd * (w ? C(w[c]) : C(1)), shift = b ? C(b[c]) : C(0);
    for (int64_t n = 0; n < N; ++n) {
      const T* xp = x + (n * channels + c) * HW;
      T* yp = y + (n * channels + c) * HW;
#pragma omp simd
      for (int64_t i = 0; i < HW; ++i) yp[i] = T((C(xp[i]) - mu) * scale + shift);
    }
    mean_out[c] = mu;
    invstd_out[c] = invstd;
  }
}

// dx = (dy - mean(dy) - (x - mean) * invstd^2 * mean(dy * (x - mean))) * invstd * weight;
// dweight = sum(dy * (x - mean)) * invstd, dbias = sum(dy), per channel.
template <typename T, typename C = opmath_t<T>>
void backward(const meta::BatchNormPlan& p, const T* dy, const T* x, const T* w, const C* mean, const C* invstd, T* dx,
              T* dw, T* db) {
  const int64_t N = p.N, channels = p.C, HW = p.HW, count = N * HW;
  const bool parallel = channels > 1 && channels * count >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t c = 0; c < channels; ++c) {
    const C mu = mean[c], rs = invstd[c];
    C sum_dy = 0, sum_dy_xmu = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* dyp = dy + (n * channels + c) * HW;
      const T* xp = x + (n * channels + c) * HW;
#pragma omp simd reduction(+ : sum_dy, sum_dy_xmu)
      for (int64_t i = 0; i < HW; ++i) {
        sum_dy += C(dyp[i]);
        sum_dy_xmu += C(dyp[i]) * (C(xp[i]) - mu);
      }
    }
    dw[c] = T(sum_dy_xmu * rs);
    db[c] = T(sum_dy);
    if (count == 0) continue;
    const C mean_dy = sum_dy / C(count), k = sum_dy_xmu * rs * rs / C(count);
    const C scale = rs * (w ? C(w[c]) : C(1));
    for (int64_t n = 0; n < N; ++n) {
      const T* dyp = dy + (n * channels + c) * HW;
      const T* xp = x + (n * channels + c) * HW;
      T* dxp = dx + (n * channels + c) * HW;
#pragma omp simd
      for (int64_t i = 0; i < HW; ++i) dxp[i] = T((C(dyp[i]) - mean_dy - (C(xp[i]) - mu) * k) * scale);
    }
  }
}

}  // namespace

void _batch_norm_training(const meta::BatchNormPlan& plan, const TensorBase& output, const TensorBase& save_mean,
                          const TensorBase& save_invstd, const TensorBase& input, const TensorBase& weight,
                          const TensorBase& bias) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the registry admits floating dtypes only
      using C = opmath_t<T>;
      forward<T>(plan, static_cast<const T*>(input.data_ptr()), ptr_or_null<T>(weight), ptr_or_null<T>(bias),
                 static_cast<T*>(output.data_ptr()), static_cast<C*>(save_mean.data_ptr()),
                 static_cast<C*>(save_invstd.data_ptr()));
    }
  });
}

void _batch_norm_training_backward(const meta::BatchNormPlan& plan, const TensorBase& grad_input,
                                   const TensorBase& grad_weight, const TensorBase& grad_bias,
                                   const TensorBase& grad_out, const TensorBase& input, const TensorBase& weight,
                                   const TensorBase& save_mean, const TensorBase& save_invstd) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using C = opmath_t<T>;
      backward<T>(plan, static_cast<const T*>(grad_out.data_ptr()), static_cast<const T*>(input.data_ptr()),
                  ptr_or_null<T>(weight), static_cast<const C*>(save_mean.data_ptr()),
                  static_cast<const C*>(save_invstd.data_ptr()), static_cast<T*>(grad_input.data_ptr()),
                  static_cast<T*>(grad_weight.data_ptr()), static_cast<T*>(grad_bias.data_ptr()));
    }
  });
}

}  // namespace kiln::cpu
