// native_layer_norm and its backward on CPU: M rows of N contiguous elements (the meta step,
// kiln/meta/normalization.h, flattens the batch dims and normalized_shape). Each row is read in
// compute precision (float for 16-bit floats): a two-pass mean and variance (exact for rows whose
// mean is large against their spread, unlike E[x^2] - E[x]^2), then one pass to write.
// The backward's input gradient is per row; grad_weight and grad_bias sum over rows, so each
// thread sums its rows into a buffer of its own and the buffers are added in thread order
// (the result does not depend on scheduling).
#include <algorithm>
#include <cmath>
#include <vector>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/native_layer_norm.h"
#include "kiln/gen/kernels/cpu/native_layer_norm_backward.h"
#include "kernel_utils.h"

namespace kiln::cpu {
namespace {

template <typename T>
void layer_norm_rows(const meta::LayerNormPlan& plan, const T* x, const T* w, const T* b, T* y, T* mean_out,
                     T* rstd_out) {
  using C = opmath_t<T>;
  const int64_t M = plan.M, N = plan.N;
  const C eps = C(plan.eps);
  const bool parallel = M > 1 && M * N >= kParallelGrain;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < M; ++r) {
    const T* xr = x + r * N;
    T* yr = y + r * N;
    C mu, rs;
    mean_and_rstd(xr, N, eps, &mu, &rs);
    if (w && b) {
#pragma omp simd
      for (int64_t i = 0; i < N; ++i) yr[i] = T((C(xr[i]) - mu) * rs * C(w[i]) + C(b[i]));
    } else if (w) {
#pragma omp simd
      for (int64_t i = 0; i < N; ++i) yr[i] = T((C(xr[i]) - mu) * rs * C(w[i]));
    } else if (b) {
#pragma omp simd
      for (int64_t i = 0; i < N; ++i) yr[i] = T((C(xr[i]) - mu) * rs + C(b[i]));
    } else {
#pragma omp simd
      for (int64_t i = 0; i < N; ++i) yr[i] = T((C(xr[i]) - mu) * rs);
    }
    mean_out[r] = T(mu);
    rstd_out[r] = T(rs);
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w and xhat = (x - mean) * rstd;
// dw = sum over rows of dy * xhat, db = sum over rows of dy.
template <typename T>
void layer_norm_backward_rows(const meta::LayerNormPlan& plan, const T* dy, const T* x, const T* mean, const T* rstd,
                              const T* w, T* dx, T* dw, T* db) {
  using C = opmath_t<T>;
  const int64_t M = plan.M, N = plan.N;
  const int threads = kiln::detail::threads_for(M * N, M);
  std::vector<C> partial(size_t(threads) * size_t(2 * N), C(0));  // per thread: dw sums, then db sums
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    C* pw = partial.data() + size_t(t) * size_t(2 * N);
    C* pb = pw + N;
    const int64_t begin = M * t / nt, end = M * (t + 1) / nt;
    for (int64_t r = begin; r < end; ++r) {
      const T* dyr = dy + r * N;
      const T* xr = x + r * N;
      const C mu = C(mean[r]), rs = C(rstd[r]);
      C sg = 0, sgx = 0;
#pragma omp simd reduction(+ : sg, sgx)
      for (int64_t i = 0; i < N; ++i) {
        const C g = C(dyr[i]) * (w ? C(w[i]) : C(1));
        const C xh = (C(xr[i]) - mu) * rs;
        sg += g;
        sgx += g * xh;
        pw[i] += C(dyr[i]) * xh;
        pb[i] += C(dyr[i]);
      }
      const C a = sg / C(N), c = sgx / C(N);
      T* dxr = dx + r * N;
#pragma omp simd
      for (int64_t i = 0; i < N; ++i) {
        const C g = C(dyr[i]) * (w ? C(w[i]) : C(1));
        const C xh = (C(xr[i]) - mu) * rs;
        dxr[i] = T(rs * (g - a - xh * c));
      }
    }
  }
  for (int64_t i = 0; i < N; ++i) {
    C sw = 0, sb = 0;
    for (int t = 0; t < threads; ++t) {
      sw += partial[size_t(t) * size_t(2 * N) + size_t(i)];
      sb += partial[size_t(t) * size_t(2 * N) + size_t(N + i)];
    }
    dw[i] = T(sw);
    db[i] = T(sb);
  }
}

}  // namespace

void native_layer_norm(const meta::LayerNormPlan& plan, const TensorBase& output, const TensorBase& mean,
                       const TensorBase& rstd, const TensorBase& input, const TensorBase& weight,
                       const TensorBase& bias) {
  if (plan.M == 0) return;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the registry admits floating dtypes only
      layer_norm_rows<T>(plan, static_cast<const T*>(input.data_ptr()), ptr_or_null<T>(weight), ptr_or_null<T>(bias),
                         static_cast<T*>(output.data_ptr()), static_cast<T*>(mean.data_ptr()),
                         static_cast<T*>(rstd.data_ptr()));
    }
  });
}

void native_layer_norm_backward(const meta::LayerNormPlan& plan, const TensorBase& grad_input,
                                const TensorBase& grad_weight, const TensorBase& grad_bias, const TensorBase& grad_out,
                                const TensorBase& input, const TensorBase& mean, const TensorBase& rstd,
                                const TensorBase& weight, const TensorBase& /*bias: does not enter the gradients*/) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      T* dw = static_cast<T*>(grad_weight.data_ptr());
      T* db = static_cast<T*>(grad_bias.data_ptr());
      if (plan.M == 0) {  // no rows: the parameters' gradients are sums of nothing
        std::fill(dw, dw + plan.N, T(0));
        std::fill(db, db + plan.N, T(0));
        return;
      }
      if (plan.N == 0) return;
      layer_norm_backward_rows<T>(plan, static_cast<const T*>(grad_out.data_ptr()),
                                  static_cast<const T*>(input.data_ptr()), static_cast<const T*>(mean.data_ptr()),
                                  static_cast<const T*>(rstd.data_ptr()), ptr_or_null<T>(weight),
                                  static_cast<T*>(grad_input.data_ptr()), dw, db);
    }
  });
}

}  // namespace kiln::cpu
