// softmax and log_softmax along any dim on CPU.
// The meta step (kiln/meta/along_dim.h) views the input as [outer, D, inner], contiguous and
// of the result dtype (dtype= casts first, as PyTorch). inner == 1 (the last dim) takes the
// row path: one pass for the max, one for sum(exp(x - max)), one to write. Otherwise blocks of
// inner columns are processed together so every pass is a unit-stride loop.
// 16-bit floats compute in float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/log_softmax.h"
#include "kiln/gen/kernels/cpu/softmax.h"
#include "kernel_utils.h"
#include "vec_math.h"
#include "kiln/common/math_simd.h"

namespace kiln::cpu {
namespace {

inline constexpr int64_t kColumns = 256;  // inner columns per task on the strided path

// A row's exp(x - max) through libmvec (std::exp, vectorized by math_simd.h) where that is safe
// to prefer: libmvec's float exp runs at twice vec_exp's speed while every argument lies in its
// fast range (|x| < 87.3), but a vector holding one argument outside it (a masked -inf) falls
// back to scalar calls, at three times vec_exp's cost. A row whose minimum is within 87 of its
// maximum has no such argument; other rows, and double, take exp_c.
template <typename C>
bool libmvec_safe(C row_min, C row_max) {
  return std::is_same_v<C, float> && row_min - row_max > C(-87);
}
KILN_INLINE float exp_fast(float x) { return std::exp(x); }
KILN_INLINE double exp_fast(double x) { return std::exp(x); }

// sum of exp(x - m) over a row, each term also stored in e unless e is null
template <bool kFast, typename T, typename C>
C exp_row(const T* x, C m, int64_t D, C* e) {
  C s = 0;
  if (!e) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < D; ++i) s += kFast ? exp_fast(C(x[i]) - m) : exp_c(C(x[i]) - m);
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < D; ++i) {
      e[i] = kFast ? exp_fast(C(x[i]) - m) : exp_c(C(x[i]) - m);
      s += e[i];
    }
  }
  return s;
}

// A NaN in a row needs no special case: exp(NaN - max) makes the sum, hence the row, NaN.
template <typename T, bool kLog>
void softmax_rows(const T* in, T* out, int64_t outer, int64_t D) {
  using C = opmath_t<T>;
  const bool parallel = outer > 1 && outer * D >= kParallelGrain;
#pragma omp parallel if (parallel)
  {
    std::vector<C> buf(static_cast<size_t>(D));  // exp(x - max) in compute precision, reused per row
    C* e = buf.data();
#pragma omp for schedule(static)
    for (int64_t r = 0; r < outer; ++r) {
      const T* x = in + r * D;
      T* y = out + r * D;
      C m = -std::numeric_limits<C>::infinity(), lo = std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : m) reduction(min : lo)
      for (int64_t i = 0; i < D; ++i) {
        m = std::max(m, C(x[i]));
        lo = std::min(lo, C(x[i]));
      }
      const bool fast = libmvec_safe(lo, m);
      if constexpr (kLog) {
        // only the sum is needed: nothing is stored in this pass
        C* const none = nullptr;
        const C s = fast ? exp_row<true>(x, m, D, none) : exp_row<false>(x, m, D, none);
        const C shift = m + std::log(s);
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) y[i] = T(C(x[i]) - shift);
      } else {
        const C s = fast ? exp_row<true>(x, m, D, e) : exp_row<false>(x, m, D, e);
        // one division per row; the multiply is within an ulp of dividing each element
        const C inv = C(1) / s;
#pragma omp simd
        for (int64_t i = 0; i < D; ++i) y[i] = T(e[i] * inv);
      }
    }
  }
}

template <typename T, bool kLog>
void softmax_columns(const T* in, T* out, int64_t outer, int64_t D, int64_t inner) {
  using C = opmath_t<T>;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const bool parallel = outer * blocks > 1 && outer * D * inner >= kParallelGrain;
#pragma omp parallel for schedule(static) collapse(2) if (parallel)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t j0 = b * kColumns, w = std::min(kColumns, inner - j0);
      const T* x = in + o * D * inner + j0;
      T* y = out + o * D * inner + j0;
      C m[kColumns], s[kColumns];
      for (int64_t j = 0; j < w; ++j) { m[j] = -std::numeric_limits<C>::infinity(); s[j] = 0; }
      for (int64_t d = 0; d < D; ++d) {
        const T* xd = x + d * inner;
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) m[j] = std::max(m[j], C(xd[j]));
      }
      for (int64_t d = 0; d < D; ++d) {
        const T* xd = x + d * inner;
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) s[j] += exp_c(C(xd[j]) - m[j]);
      }
      if constexpr (kLog) {
        for (int64_t j = 0; j < w; ++j) m[j] += std::log(s[j]);
      } else {
        for (int64_t j = 0; j < w; ++j) s[j] = C(1) / s[j];
      }
      for (int64_t d = 0; d < D; ++d) {
        const T* xd = x + d * inner;
        T* yd = y + d * inner;
        if constexpr (kLog) {
#pragma omp simd
          for (int64_t j = 0; j < w; ++j) yd[j] = T(C(xd[j]) - m[j]);
        } else {
#pragma omp simd
          for (int64_t j = 0; j < w; ++j) yd[j] = T(exp_c(C(xd[j]) - m[j]) * s[j]);
        }
      }
    }
  }
}

template <bool kLog>
void softmax_impl(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  const int64_t outer = plan.split.outer, D = plan.split.size, inner = plan.split.inner;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the meta step admits floating dtypes only
      const T* x = static_cast<const T*>(self.data_ptr());
      T* y = static_cast<T*>(out.data_ptr());
      if (inner == 1) softmax_rows<T, kLog>(x, y, outer, D);
      else softmax_columns<T, kLog>(x, y, outer, D, inner);
    }
  });
}

}  // namespace

void softmax(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  softmax_impl<false>(plan, out, self);
}

void log_softmax(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  softmax_impl<true>(plan, out, self);
}

}  // namespace kiln::cpu
