#ifndef KILN_KERNELS_COMMON_SEARCH_RULES_H_
#define KILN_KERNELS_COMMON_SEARCH_RULES_H_
// The arithmetic of searchsorted/bucketize and histc, shared by the CPU and CUDA kernels
// (kernels/cpu/search.cpp, kernels/cpu/histogram.cpp, kernels/cuda/searching.cu) and tested on
// the host (tests/test_searching.cpp).
//
// The binary search probes exactly as PyTorch 1.13's (mid = start + (end - start) / 2, "go
// right" when !(mid >= value), or !(mid > value) for the right side), so a NaN value lands at
// the end and a sequence holding NaN gives PyTorch's answer, which depends on the probes.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::search {

// First position in [0, n) of the row `row` (sorter: a permutation of it, or null) whose value
// is >= v (left) or > v (right), comparing in M (float for 16-bit floats).
template <typename M, typename T>
KILN_HOST_DEVICE KILN_INLINE int64_t bound(const T* row, const int64_t* sorter, int64_t n, M v, bool right) {
  int64_t start = 0, end = n;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const M m = M(sorter ? row[sorter[mid]] : row[mid]);
    const bool go_right = right ? !(m > v) : !(m >= v);
    start = go_right ? mid + 1 : start;
    end = go_right ? end : mid;
  }
  return start;
}

// histc's bin of x for the range [lo, hi] split into `bins` (PyTorch's linear interpolation, in
// T's own arithmetic: each step rounds to T, and bins is converted to T first), or -1 when x is
// outside the range. The right edge belongs to the last bin. NaN is not outside the range in
// PyTorch 1.13's CPU test (x < lo || hi < x) and lands in the first bin there (its bin index,
// NaN cast to int64, wraps to bin 0 when scaled by the element size), so kiln counts it there,
// on CUDA too (PyTorch's CUDA kernel skips it).
template <typename M, typename T>
KILN_HOST_DEVICE KILN_INLINE int64_t histc_bin(T x, T lo, T hi, int64_t bins) {
  const M xm = M(x), lm = M(lo), hm = M(hi);
  if (xm != xm) return 0;
  if (xm < lm || hm < xm) return -1;
  const M offset = M(T(xm - lm));
  const M scaled = M(T(offset * M(T(M(bins)))));
  const M width = M(T(hm - lm));
  const M quotient = M(T(scaled / width));
  // A quotient int64 cannot hold (0/0 when the range rounds to zero width in T, an overflowed
  // product) is bin 0: PyTorch's conversion gives INT64_MIN there on x86, which wraps to bin 0
  // as NaN's does. Converting it here would be undefined behaviour.
  if (!(quotient > M(-9.2e18) && quotient < M(9.2e18))) return 0;
  int64_t pos = int64_t(quotient);
  if (pos >= bins) pos = bins - 1;  // the right edge (and a rounding past it)
  if (pos < 0) pos = 0;
  return pos;
}

}  // namespace kiln::search
#endif  // KILN_KERNELS_COMMON_SEARCH_RULES_H_
