#ifndef KILN_KERNELS_CPU_SORT_LINES_H_
#define KILN_KERNELS_CPU_SORT_LINES_H_
// The line walk the sorting kernels share: every line of [outer, size, inner] (stride inner)
// loaded as order-preserving keys (kiln/common/sort_keys.h) with its indices, in parallel over
// lines, each thread with its own scratch.
#include <type_traits>
#include "kiln/common/sort_keys.h"
#include "kiln/cpu/parallel.h"
#include "kiln/meta/sorting.h"
#include "kernel_utils.h"
#include "radix_sort.h"

namespace kiln::cpu {

template <typename T>
using SortKey = sort_keys::KeyOf<T>;

// Runs fn.template operator()<T>() for the element type of a sortable (real) dtype.
template <typename Fn>
void visit_sortable(DType dtype, const Fn& fn) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T>) fn(T{});
  });
}

template <typename T>
KILN_INLINE T value_of(typename SortKey<T>::K key, const T* x, int64_t src) {
  return SortKey<T>::value_or_input(key, x, src);
}

// fn(scratch, base, line) for every line; scratch.keys/idx hold the line's keys (complemented
// when descending) and 0..size-1, base is the line's first element in self.
template <typename T, typename Fn>
void for_each_line(const meta::SortPlan& plan, const T* x, bool descending, const Fn& fn) {
  using K = typename SortKey<T>::K;
  const int64_t n = plan.split.size, inner = plan.split.inner, lines = plan.split.outer * inner;
  if (lines == 0 || n == 0) return;
  kiln::detail::parallel_items(lines, n * 8, [&](int64_t b, int64_t e) {
    LineScratch<K> s;
    s.reserve(n);
    const K flip = descending ? ~K(0) : K(0);
    for (int64_t l = b; l < e; ++l) {
      const int64_t base = (l / inner) * n * inner + l % inner;
      K* keys = s.keys.data();
      uint32_t* idx = s.idx.data();
      for (int64_t j = 0; j < n; ++j) {
        keys[j] = SortKey<T>::key(x[base + j * inner]) ^ flip;
        idx[j] = uint32_t(j);
      }
      fn(s, base, l);
    }
  });
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_SORT_LINES_H_
