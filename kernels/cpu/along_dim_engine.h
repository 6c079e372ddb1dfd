#ifndef KILN_KERNELS_CPU_ALONG_DIM_ENGINE_H_
#define KILN_KERNELS_CPU_ALONG_DIM_ENGINE_H_
// The CPU along_dim engine: runs a rule (kiln/common/along_dim_rules.h) over every line of
// [outer, D, inner] along plan.dim with an int64 index per element. Every index is checked
// before anything is written; lines of the outer dim run in parallel, each walked in order.
#include <algorithm>
#include "kiln/common/along_dim_rules.h"
#include "kiln/cpu/parallel.h"
#include "kiln/meta/along_dim.h"

namespace kiln::cpu {

template <template <typename> class Rule>
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
    using R = Rule<T>;
    const T* x = static_cast<const T*>(self.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    if constexpr (R::kZeroFirst) std::fill(y, y + n, T(0));
    kiln::detail::parallel_items(outer, D * inner, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * D * inner + i;
          for (int64_t j = 0; j < D; ++j) {
            const int64_t at = base + j * inner;
            R::apply(y, x, at, base + idx[at] * inner);
          }
        }
      }
    });
  });
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_ALONG_DIM_ENGINE_H_
