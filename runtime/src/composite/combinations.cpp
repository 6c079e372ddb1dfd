// combinations (PyTorch 1.13's semantics and messages): the result's size depends on len(self)
// and r only, so the index tuples are listed on the host in PyTorch's (lexicographic) order and
// self is read through them with one index_select, whose gradient is an index_add.
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/index_select.h"

namespace kiln::composite {
namespace {

// Every r-tuple of indices in [0, n), increasing (non-decreasing with replacement), in order.
std::vector<int64_t> index_tuples(int64_t n, int64_t r, bool with_replacement) {
  std::vector<int64_t> out, tuple(size_t(r), 0);
  if (!with_replacement)
    for (int64_t i = 0; i < r; ++i) tuple[size_t(i)] = i;
  const auto valid = [&] { return r == 0 || tuple[size_t(r - 1)] < n; };
  constexpr int64_t kMaxElements = int64_t(1) << 40;  // far beyond memory: refuse before looping
  while (valid()) {
    KILN_CHECK(int64_t(out.size()) + r <= kMaxElements, ValueError, "combinations", "r", "too many combinations of ", n,
               " elements taken ", r, " at a time");
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
  const std::vector<int64_t> tuples = index_tuples(self.size(0), r, with_replacement);
  const int64_t count = int64_t(tuples.size()) / r;
  const Tensor index = from_vector(tuples, {count * r}).to(self.device());
  return kiln::index_select(self, 0, index).reshape({count, r});
}

}  // namespace kiln::composite
