// combinations (PyTorch 1.13's semantics and messages): the result's size depends on len(self)
// and r only, so the index tuples are listed on the host in PyTorch's (lexicographic) order and
// self is read through them with one index_select, whose gradient is an index_add.
#include <algorithm>
#include <limits>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/index_select.h"

namespace kiln::composite {
namespace {

constexpr int64_t kMaxElements = int64_t(1) << 40;  // far beyond memory: refuse before allocating

// C(m, k), exact up to kMaxElements and kMaxElements + 1 above it. Each step's quotient is exact:
// c = C(m - k + i - 1, i - 1) before step i.
int64_t binomial_capped(int64_t m, int64_t k) {
  if (k < 0 || k > m) return 0;
  k = std::min(k, m - k);
  unsigned __int128 c = 1;
  for (int64_t i = 1; i <= k; ++i) {
    c = c * static_cast<unsigned __int128>(m - k + i) / static_cast<unsigned __int128>(i);
    if (c > static_cast<unsigned __int128>(kMaxElements)) return kMaxElements + 1;
  }
  return static_cast<int64_t>(c);
}

// How many r-tuples there are: C(n, r), or C(n + r - 1, r) with replacement (capped as above).
int64_t tuple_count(int64_t n, int64_t r, bool with_replacement) {
  if (!with_replacement) return binomial_capped(n, r);
  if (n <= 1) return n;                                                      // none, or the one constant tuple
  if (r > std::numeric_limits<int64_t>::max() - n) return kMaxElements + 1;  // n + r - 1 overflows
  return binomial_capped(n + r - 1, n - 1);
}

// Every r-tuple of indices in [0, n), increasing (non-decreasing with replacement), in order.
std::vector<int64_t> index_tuples(int64_t n, int64_t r, bool with_replacement, int64_t count) {
  std::vector<int64_t> out, tuple(size_t(r), 0);
  out.reserve(size_t(count * r));
  if (!with_replacement)
    for (int64_t i = 0; i < r; ++i) tuple[size_t(i)] = i;
  for (int64_t t = 0; t < count; ++t) {
    out.insert(out.end(), tuple.begin(), tuple.end());
    // advance: the rightmost position that can still grow, then reset the ones after it
    int64_t i = r - 1;
    while (i >= 0 && tuple[size_t(i)] + (with_replacement ? 0 : r - 1 - i) >= n - 1) --i;
    if (i < 0) break;
    ++tuple[size_t(i)];
    for (int64_t j = i + 1; j < r; ++j) tuple[size_t(j)] = tuple[size_t(j - 1)] + (with_replacement ? 0 : 1);
  }
  return out;
}

}  // namespace

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  KILN_CHECK(self.dim() == 1, ShapeError, "combinations", "self", "Expect a 1D vector, but got shape ",
             self.shape_str());
  KILN_CHECK(r >= 0, ValueError, "combinations", "r", "Expect a non-negative number, but got ", r);
  if (r == 0) return kiln::empty({0}, self.options());
  const int64_t n = self.size(0), count = tuple_count(n, r, with_replacement);
  KILN_CHECK(static_cast<unsigned __int128>(count) * static_cast<unsigned __int128>(r) <=
                 static_cast<unsigned __int128>(kMaxElements),
             ValueError, "combinations", "r", "too many combinations of ", n, " elements taken ", r, " at a time");
  const std::vector<int64_t> tuples = count > 0 ? index_tuples(n, r, with_replacement, count) : std::vector<int64_t>{};
  const Tensor index = from_vector(tuples, {count * r}).to(self.device());
  return kiln::index_select(self, 0, index).reshape({count, r});
}

}  // namespace kiln::composite
