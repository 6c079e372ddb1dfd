// The two halves of cummax/cummin's gradient on CPU, per line of [outer, D, inner] along dim:
// _cummaxmin_backward adds self[j] into out[indices[j]] (in order of j: deterministic), and its
// adjoint _cummaxmin_gather reads out[j] = self[indices[j]]. Every index is checked before
// anything is written.
#include <algorithm>
#include "kiln/gen/kernels/cpu/_cummaxmin_backward.h"
#include "kiln/gen/kernels/cpu/_cummaxmin_gather.h"
#include "kiln/cpu/parallel.h"

namespace kiln::cpu {
namespace {

template <bool kScatter>
void along_lines(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self,
                 const TensorBase& indices, const char* op) {
  const int64_t outer = plan.split.outer, D = plan.split.size, inner = plan.split.inner;
  const int64_t n = outer * D * inner;
  const int64_t* idx = static_cast<const int64_t*>(indices.data_ptr());
  for (int64_t i = 0; i < n; ++i)
    KILN_CHECK(idx[i] >= 0 && idx[i] < D, IndexError, op, "indices", "index ", idx[i], " is out of bounds for dim ",
               plan.dim, " with size ", D);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using M = opmath_t<T>;
    const T* x = static_cast<const T*>(self.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    if constexpr (kScatter) std::fill(y, y + n, T(0));
    kiln::detail::parallel_items(outer, D * inner, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * D * inner + i;
          for (int64_t j = 0; j < D; ++j) {
            const int64_t at = base + j * inner, to = base + idx[at] * inner;
            if constexpr (kScatter) y[to] = T(M(y[to]) + M(x[at]));
            else y[at] = x[to];
          }
        }
      }
    });
  });
}

}  // namespace

void _cummaxmin_backward(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self,
                         const TensorBase& indices) {
  along_lines<true>(plan, out, self, indices, "_cummaxmin_backward");
}

void _cummaxmin_gather(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self,
                       const TensorBase& indices) {
  along_lines<false>(plan, out, self, indices, "_cummaxmin_gather");
}

}  // namespace kiln::cpu
