// The amp ops on CPU, with the arithmetic of PyTorch 1.13's CUDA kernels
// (aten/src/ATen/native/cuda/AmpKernels.cu; PyTorch has no CPU ones). The meta steps
// (kiln/meta/foreach.h, kiln/meta/amp.h) have checked every argument.
#include <algorithm>
#include <atomic>
#include <cmath>
#include "kiln/common/foreach_index.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/amp_non_finite_check_and_unscale.h"
#include "kiln/gen/kernels/cpu/amp_update_scale.h"

namespace kiln::cpu {
namespace {

// x = x * inv in M (float; double for double), rounded once to T, over [begin, end) of a dense
// run. Returns whether any element was inf or NaN. No early exit and no branch, so it
// vectorizes: x - x is 0 for a finite x and NaN otherwise.
template <typename T, typename M>
bool unscale_dense(T* p, int64_t begin, int64_t end, M inv) {
  int bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    const M v = M(p[i]);
    bad |= int(!(v - v == M(0)));
    p[i] = T(v * inv);
  }
  return bad != 0;
}

template <typename T, typename M>
bool unscale_strided(T* p, const foreach_index::StridedIndex& ix, int64_t begin, int64_t end, M inv) {
  int bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    T& x = p[ix.offset(i)];
    const M v = M(x);
    bad |= int(!(v - v == M(0)));
    x = T(v * inv);
  }
  return bad != 0;
}

// One pass over t: unscales it and reports a non-finite element. Parallel over its elements
// when it is large enough (kiln's grain); each chunk reports once.
template <typename T>
bool unscale_one(const TensorBase& t, float inv_scale) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const M inv = M(inv_scale);
  const int64_t n = t.numel();
  if (n == 0) return false;
  T* base = static_cast<T*>(t.data_ptr());
  foreach_index::StridedIndex ix;
  const bool indexed = foreach_index::make_index(int(t.dim()), t.sizes().data(), t.strides().data(), ix);
  int64_t lowest = 0;
  std::atomic<bool> bad{false};
  if (indexed && foreach_index::dense_span(ix, &lowest)) {
    T* p = base + lowest;
    kiln::detail::parallel_range(n, [&](int64_t b, int64_t e) {
      if (unscale_dense(p, b, e, inv)) bad.store(true, std::memory_order_relaxed);
    });
  } else if (indexed) {
    kiln::detail::parallel_range(n, [&](int64_t b, int64_t e) {
      if (unscale_strided(base, ix, b, e, inv)) bad.store(true, std::memory_order_relaxed);
    });
  } else {  // more than kMaxDims dims of size > 1: element by element through the sizes
    bool any = false;
    const auto sizes = t.sizes();
    const auto strides = t.strides();
    std::vector<int64_t> idx(sizes.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
      any = unscale_dense(base + off, 0, 1, inv) || any;
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    return any;
  }
  return bad.load();
}

}  // namespace

void amp_non_finite_check_and_unscale(const meta::ForeachPlan& plan, const TensorBaseList& self,
                                      const TensorBase& found_inf, const TensorBase& inv_scale) {
  if (plan.length == 0) return;
  const float inv = *static_cast<const float*>(inv_scale.data_ptr());
  bool any = false;
  for (const TensorBase& t : self) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) {  // the entry admits floating dtypes only
        any = unscale_one<T>(t, inv) || any;
      }
    });
  }
  // every writer writes 1, so no read-modify-write is needed (as the CUDA kernel's plain store)
  if (any) *static_cast<float*>(found_inf.data_ptr()) = 1.0f;
}

void amp_update_scale(const meta::AmpUpdateScalePlan& /*plan*/, const TensorBase& self,
                      const TensorBase& growth_tracker, const TensorBase& found_inf, double scale_growth_factor,
                      double scale_backoff_factor, int64_t growth_interval) {
  float* scale = static_cast<float*>(self.data_ptr());
  int32_t* tracker = static_cast<int32_t*>(growth_tracker.data_ptr());
  const float found = *static_cast<const float*>(found_inf.data_ptr());
  if (found != 0.0f) {
    *scale = float(double(*scale) * scale_backoff_factor);
    *tracker = 0;
    return;
  }
  const int64_t successful = int64_t(*tracker) + 1;
  if (successful == growth_interval) {
    const float grown = float(double(*scale) * scale_growth_factor);
    if (std::isfinite(grown)) *scale = grown;  // never grow into inf
    *tracker = 0;
  } else {
    *tracker = int32_t(successful);
  }
}

}  // namespace kiln::cpu
