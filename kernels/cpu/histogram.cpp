// histc and _bincount on CPU (plans in kiln/meta/searching.h). Counting is exact: each thread
// counts its chunk into int64 bins of its own and the partial counts are added up afterwards,
// so the result does not depend on the thread count. bincount's weighted sums run in input
// order on one thread, which is PyTorch's order and gives its sums bit for bit.
#include <omp.h>

#include <cmath>
#include <vector>
#include "kernel_utils.h"
#include "kiln/common/search_rules.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/bincount.h"
#include "kiln/gen/kernels/cpu/histc.h"

namespace kiln::cpu {
namespace {

// Threads for counting n elements into `bins` bins: each thread's bins are zeroed and summed,
// so forking is worth it only while they cost less than the elements.
int count_threads(int64_t n, int64_t bins) {
  const int threads = kiln::detail::threads_for(n, n);
  return bins * threads > n ? 1 : threads;
}

// counts[b] over x[0, n): bin_of(i) is the bin of element i, or -1 to skip it. Returns the
// first element whose bin_of reported an error (bin_of returns -2), or -1.
template <typename BinOf>
int64_t count_into(int64_t n, int64_t bins, std::vector<int64_t>& counts, const BinOf& bin_of) {
  const int threads = count_threads(n, bins);
  std::vector<int64_t> partial(size_t(threads) * size_t(bins), 0);
  std::vector<int64_t> bad(size_t(threads), -1);
  kiln::detail::parallel_chunks(n, threads, 64, [&](int64_t b, int64_t e) {
    const int t = threads < 2 ? 0 : omp_get_thread_num();
    int64_t* mine = partial.data() + size_t(t) * size_t(bins);
    for (int64_t i = b; i < e; ++i) {
      const int64_t k = bin_of(i);
      if (k >= 0) ++mine[k];
      else if (k == -2 && bad[size_t(t)] < 0) bad[size_t(t)] = i;
    }
  });
  counts.assign(size_t(bins), 0);
  for (int t = 0; t < threads; ++t) {
    if (bad[size_t(t)] >= 0) return bad[size_t(t)];
    for (int64_t k = 0; k < bins; ++k) counts[size_t(k)] += partial[size_t(t) * size_t(bins) + size_t(k)];
  }
  return -1;
}

// The data's extremes as aminmax gives them (NaN when any element is NaN).
template <typename T>
void extremes(const T* x, int64_t n, double* lo, double* hi) {
  using M = opmath_t<T>;
  const int threads = kiln::detail::threads_for(n, n);
  std::vector<M> mins(size_t(std::max(threads, 1)), M(INFINITY)), maxs(mins.size(), M(-INFINITY));
  std::vector<int> nans(mins.size(), 0);
  kiln::detail::parallel_chunks(n, threads, 64, [&](int64_t b, int64_t e) {
    const int t = threads < 2 ? 0 : omp_get_thread_num();
    M mn = M(INFINITY), mx = M(-INFINITY);
    int nan = 0;
#pragma omp simd reduction(min : mn) reduction(max : mx) reduction(| : nan)
    for (int64_t i = b; i < e; ++i) {
      const M v = M(x[i]);
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      nan |= int(v != v);
    }
    mins[size_t(t)] = mn, maxs[size_t(t)] = mx, nans[size_t(t)] = nan;
  });
  double mn = INFINITY, mx = -INFINITY;
  bool nan = false;
  for (size_t t = 0; t < mins.size(); ++t)
    mn = std::min(mn, double(mins[t])), mx = std::max(mx, double(maxs[t])), nan = nan || nans[t];
  *lo = nan ? NAN : mn;
  *hi = nan ? NAN : mx;
}

}  // namespace

void histc(const meta::HistcPlan& plan, const TensorBase& out, const TensorBase& self, int64_t /*bins*/,
           const Scalar& /*min*/, const Scalar& /*max*/) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_float_like_v<T>) {
      KILN_FAIL(DTypeError, "histc", "self", "\"histogram_cpu\" not implemented for '", dtype_name(plan.dtype), "'");
    } else {
      using M = opmath_t<T>;
      const T* x = static_cast<const T*>(self.data_ptr());
      const int64_t n = self.numel(), bins = plan.bins;
      double lo = plan.lo, hi = plan.hi;
      if (plan.from_data) {
        double mn = 0, mx = 0;
        extremes(x, n, &mn, &mx);
        meta::histc_range_from_data("histc", n == 0, mn, mx, &lo, &hi);
      }
      const T left = T(lo), right = T(hi);  // the edges as linspace writes them
      std::vector<int64_t> counts;
      count_into(n, bins, counts, [&](int64_t i) { return search::histc_bin<M>(x[i], left, right, bins); });
      T* y = static_cast<T*>(out.data_ptr());
      for (int64_t k = 0; k < bins; ++k) y[k] = T(M(counts[size_t(k)]));
    }
  });
}

void bincount(const meta::BincountPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& weights,
              int64_t /*length*/) {
  visit_dtype(self.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if constexpr (!std::is_integral_v<I> || std::is_same_v<I, bool>) {
      KILN_FAIL(DTypeError, "bincount", "self", "\"bincount_cpu\" not implemented for '", dtype_name(self.dtype()),
                "'");
    } else {
      const I* x = static_cast<const I*>(self.data_ptr());
      const int64_t n = self.numel(), length = plan.length;
      auto bin_of = [&](int64_t i) -> int64_t {
        const int64_t v = int64_t(x[i]);
        return v >= 0 && v < length ? v : -2;
      };
      auto fail = [&](int64_t i) {
        KILN_FAIL(IndexError, "_bincount", "self", "value ", int64_t(x[i]), " is out of range for ", length, " bins");
      };
      if (!weights.defined()) {
        std::vector<int64_t> counts;
        const int64_t bad = count_into(n, length, counts, bin_of);
        if (bad >= 0) fail(bad);
        int64_t* y = static_cast<int64_t*>(out.data_ptr());
        for (int64_t k = 0; k < length; ++k) y[k] = counts[size_t(k)];
        return;
      }
      for (int64_t i = 0; i < n; ++i)
        if (bin_of(i) < 0) fail(i);  // checked before anything is written
      auto sum = [&](auto w_tag) {
        using W = decltype(w_tag);
        const W* w = static_cast<const W*>(weights.data_ptr());
        W* y = static_cast<W*>(out.data_ptr());
        for (int64_t k = 0; k < length; ++k) y[k] = W(0);
        for (int64_t i = 0; i < n; ++i) y[x[i]] += w[i];
      };
      if (plan.dtype == DType::Float32) sum(float{});
      else sum(double{});
    }
  });
}

}  // namespace kiln::cpu
