// cumsum (and its reverse, the gradient) along one dim on CPU.
// The input, cast to the result dtype first as PyTorch does, is viewed as [outer, D, inner].
// The last dim (inner == 1) scans each row; otherwise each step adds a whole unit-stride row of
// inner elements to the previous one, which vectorizes. Rows of the outer dim run in parallel.
// 16-bit floats accumulate in float; integers and bool give int64 unless dtype= says otherwise.
#include <algorithm>
#include <vector>

#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/kernel_utils.h"
#include "runtime/src/core/parallel.h"

namespace kiln::cpu {
namespace {

// One row after another, rows split over the threads. (Interleaving several rows for more
// independent adds was slower: rows of 1024 floats sit 4 KiB apart and collide in L1 sets.)
template <typename T, bool kReverse>
void scan_rows(const T* in, T* out, int64_t outer, int64_t D) {
  using acc_t = opmath_t<T>;
  detail::parallel_items(outer, D, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* x = in + o * D;
      T* y = out + o * D;
      acc_t acc = acc_t(0);
      if constexpr (kReverse) {
        for (int64_t d = D - 1; d >= 0; --d) y[d] = T(acc += acc_t(x[d]));
      } else {
        for (int64_t d = 0; d < D; ++d) y[d] = T(acc += acc_t(x[d]));
      }
    }
  });
}

template <typename T, bool kReverse>
void scan_columns(const T* in, T* out, int64_t outer, int64_t D, int64_t inner) {
  using acc_t = opmath_t<T>;
  detail::parallel_items(outer, D * inner, [&](int64_t b, int64_t e) {
    std::vector<acc_t> acc(static_cast<size_t>(inner));
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), acc_t(0));
      for (int64_t step = 0; step < D; ++step) {
        int64_t d = kReverse ? D - 1 - step : step;
        const T* x = in + (o * D + d) * inner;
        T* y = out + (o * D + d) * inner;
        for (int64_t i = 0; i < inner; ++i) y[i] = T(acc[i] += acc_t(x[i]));
      }
    }
  });
}

template <bool kReverse>
Tensor cumsum_impl(const Tensor& self, int64_t dim, DType dt, const char* op) {
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd == 0 ? 1 : nd, op, "dim");
  Tensor in = dense(self, dt);
  Tensor out = empty(self.sizes(), TensorOptions(dt));
  if (out.numel() == 0) return out;
  const DimSplit split = split_at_dim(self, d);
  const int64_t outer = split.outer, D = split.size, inner = split.inner;
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = static_cast<const T*>(in.data_ptr());
      T* y = static_cast<T*>(out.data_ptr());
      if (inner == 1) scan_rows<T, kReverse>(x, y, outer, D);
      else scan_columns<T, kReverse>(x, y, outer, D, inner);
    } else {
      KILN_FAIL(DTypeError, op, "dtype", "bool results are not supported");
    }
  });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return cumsum_impl<false>(self, dim, sum_result_dtype(self.dtype(), dtype), "cumsum");
}

Tensor _cumsum_reverse(const Tensor& self, int64_t dim) {
  return cumsum_impl<true>(self, dim, sum_result_dtype(self.dtype(), std::nullopt), "_cumsum_reverse");
}

}  // namespace kiln::cpu
