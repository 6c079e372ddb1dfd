// topk on CPU, per line (lines in parallel): for small k one pass keeps the best k in order
// and rejects most elements with one compare against the k-th; for large k the line is
// radix-sorted. Equal values go by index, so the result is the stable sort's first k.
#include "kiln/gen/kernels/cpu/topk.h"
#include "sort_lines.h"

namespace kiln::cpu {
namespace {

// The best k of one line by rank (larger is better, ties: the earlier index), in order.
template <typename K>
struct BestK {
  std::vector<K> rank;
  std::vector<uint32_t> idx;
  int64_t m = 0, k = 0;
  explicit BestK(int64_t k_) : rank(size_t(k_)), idx(size_t(k_)), k(k_) {}
  // Only called for ranks that beat the k-th (or while fewer than k are kept).
  KILN_INLINE void insert(K r, uint32_t i) {
    int64_t j = m < k ? m++ : k - 1;
    for (; j > 0 && rank[size_t(j - 1)] < r; --j) {
      rank[size_t(j)] = rank[size_t(j - 1)];
      idx[size_t(j)] = idx[size_t(j - 1)];
    }
    rank[size_t(j)] = r;
    idx[size_t(j)] = i;
  }
};

constexpr int64_t kBlock = 32;  // elements tested at a time, so the test vectorizes

// Whether any element of x[0, kBlock) (stride `step`) may beat the k-th best, whose rank is
// `worst`. Values other than 16-bit floats compare natively against the k-th's value (the key
// order is the value order, NaN above all); the others compare keys.
template <typename T, int64_t kStep>
KILN_INLINE bool block_may_beat(const T* x, int64_t step, typename SortKey<T>::K worst, typename SortKey<T>::K flip,
                                bool largest) {
  using KO = SortKey<T>;
  const int64_t st = kStep ? kStep : step;
  bool any = false;
  if constexpr (is_reduced_float_v<T>) {
    for (int64_t t = 0; t < kBlock; ++t) any |= (KO::key(x[t * st]) ^ flip) > worst;
  } else {
    const T kth = KO::value(worst ^ flip);
    if (largest) {
      if (KO::is_nan(worst)) return false;  // k NaNs already: nothing beats them
      int beats = 0;                        // !(x <= kth): greater, or NaN
#pragma omp simd reduction(| : beats)
      for (int64_t t = 0; t < kBlock; ++t) beats |= int(!(x[t * st] <= kth));
      any = beats != 0;
    } else if (KO::is_nan(worst ^ flip)) {
      for (int64_t t = 0; t < kBlock; ++t) any |= !is_nan(x[t * st]);  // any number beats a NaN
    } else {
      int beats = 0;
#pragma omp simd reduction(| : beats)
      for (int64_t t = 0; t < kBlock; ++t) beats |= int(x[t * st] < kth);
      any = beats != 0;
    }
  }
  return any;
}

template <typename T, int64_t kStep>
void select_line(BestK<typename SortKey<T>::K>& best, const T* x, int64_t n, int64_t step, typename SortKey<T>::K flip,
                 bool largest) {
  using K = typename SortKey<T>::K;
  const int64_t st = kStep ? kStep : step;
  best.m = 0;
  const int64_t k = best.k;
  for (int64_t j = 0; j < k; ++j) best.insert(SortKey<T>::key(x[j * st]) ^ flip, uint32_t(j));
  int64_t j = k;
  for (; j + kBlock <= n; j += kBlock) {
    if (!block_may_beat<T, kStep>(x + j * st, st, best.rank[size_t(k - 1)], flip, largest)) continue;
    for (int64_t t = 0; t < kBlock; ++t) {
      const K r = SortKey<T>::key(x[(j + t) * st]) ^ flip;
      if (r > best.rank[size_t(k - 1)]) best.insert(r, uint32_t(j + t));
    }
  }
  for (; j < n; ++j) {
    const K r = SortKey<T>::key(x[j * st]) ^ flip;
    if (r > best.rank[size_t(k - 1)]) best.insert(r, uint32_t(j));
  }
}

}  // namespace

void topk(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  visit_sortable(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using K = typename SortKey<T>::K;
    const T* x = static_cast<const T*>(self.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* ind = static_cast<int64_t*>(indices.data_ptr());
    const int64_t n = plan.split.size, inner = plan.split.inner, k = plan.take;
    const int64_t lines = plan.split.outer * inner;
    if (k == 0 || lines == 0) return;
    // largest first: the rank is the key; smallest first: its complement (NaN last).
    const K flip = plan.descending ? K(0) : ~K(0);
    auto out_base = [&](int64_t l) { return (l / inner) * k * inner + l % inner; };
    if (k <= 64 && k * 16 <= n) {
      kiln::detail::parallel_items(lines, n, [&](int64_t b, int64_t e) {
        BestK<K> best(k);
        for (int64_t l = b; l < e; ++l) {
          const int64_t base = (l / inner) * n * inner + l % inner, ob = out_base(l);
          if (inner == 1) select_line<T, 1>(best, x + base, n, 1, flip, plan.descending);
          else select_line<T, 0>(best, x + base, n, inner, flip, plan.descending);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t from = best.idx[size_t(j)];
            v[ob + j * inner] = value_of<T>(best.rank[size_t(j)] ^ flip, x, base + from * inner);
            ind[ob + j * inner] = from;
          }
        }
      });
      return;
    }
    // Sorting order: descending keys for largest (ties stay in index order either way).
    const K sort_flip = plan.descending ? ~K(0) : K(0);
    for_each_line(plan, x, plan.descending, [&](LineScratch<K>& s, int64_t base, int64_t l) {
      radix_sort_line(s, n);
      const int64_t ob = out_base(l);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t from = s.idx[size_t(j)];
        v[ob + j * inner] = value_of<T>(s.keys[size_t(j)] ^ sort_flip, x, base + from * inner);
        ind[ob + j * inner] = from;
      }
    });
  });
}

}  // namespace kiln::cpu
