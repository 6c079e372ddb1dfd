// sort on CPU: every line radix-sorted on its order-preserving keys with the indices as
// payload (stable, NaN above everything), lines in parallel.
#include "kiln/gen/kernels/cpu/sort.h"
#include "sort_lines.h"

namespace kiln::cpu {

void sort(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  visit_sortable(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using K = typename SortKey<T>::K;
    const T* x = static_cast<const T*>(self.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* ind = static_cast<int64_t*>(indices.data_ptr());
    const int64_t n = plan.split.size, inner = plan.split.inner;
    const K flip = plan.descending ? ~K(0) : K(0);
    for_each_line(plan, x, plan.descending, [&](LineScratch<K>& s, int64_t base, int64_t) {
      radix_sort_line(s, n);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t at = base + j * inner, from = s.idx[size_t(j)];
        v[at] = value_of<T>(s.keys[size_t(j)] ^ flip, x, base + from * inner);
        ind[at] = from;
      }
    });
  });
}

}  // namespace kiln::cpu
