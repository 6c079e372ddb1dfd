#ifndef KILN_RUNTIME_SRC_CORE_STRIDED_H_
#define KILN_RUNTIME_SRC_CORE_STRIDED_H_
// Walking N strided operands of one shape in logical (row-major) order, innermost runs at a time.
// Used by copy_, fill_, to_vector and printing; size-1 dims are dropped and dims that are
// contiguous in every operand are merged, so a dense tensor is one run.
#include <algorithm>
#include <cstdint>
#include "kiln/array_ref.h"

namespace kiln::detail {

template <int N>
struct StridedWalk {
  // innermost first, strides in elements
  DimVector sizes;
  DimVector strides[N];
  int64_t numel = 1;

  StridedWalk(IntArrayRef shape, const IntArrayRef* operand_strides) {
    for (int64_t s : shape) numel *= s;
    for (size_t i = shape.size(); i-- > 0;) {
      if (shape[i] == 1) continue;
      int nd = int(sizes.size());
      bool merge = nd > 0;
      for (int k = 0; k < N && merge; ++k)
        merge = operand_strides[k][i] == strides[k][nd - 1] * sizes[nd - 1];
      if (merge) {
        sizes[nd - 1] *= shape[i];
        continue;
      }
      sizes.push_back(shape[i]);
      for (int k = 0; k < N; ++k) strides[k].push_back(operand_strides[k][i]);
    }
  }

  // body(const int64_t* offsets, const int64_t* inner_strides, int64_t count) over the
  // runs covering logical indices [begin, end); offsets are in elements from each base.
  template <typename Body>
  void for_each_run(int64_t begin, int64_t end, Body&& body) const {
    if (begin >= end) return;
    int nd = int(sizes.size());
    if (nd == 0) {  // one element
      int64_t zeros[N] = {}, ones[N];
      for (int k = 0; k < N; ++k) ones[k] = 1;
      body(zeros, ones, int64_t(1));
      return;
    }
    DimVector idx(size_t(nd), 0);
    int64_t rem = begin;
    int64_t off[N] = {}, inner[N];
    for (int d = 0; d < nd; ++d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
      for (int k = 0; k < N; ++k) off[k] += idx[d] * strides[k][d];
    }
    for (int k = 0; k < N; ++k) inner[k] = strides[k][0];
    int64_t pos = begin;
    while (true) {
      int64_t count = std::min(sizes[0] - idx[0], end - pos);
      body(static_cast<const int64_t*>(off), static_cast<const int64_t*>(inner), count);
      pos += count;
      if (pos >= end) break;
      for (int k = 0; k < N; ++k) off[k] += count * inner[k];
      idx[0] += count;
      for (int d = 0; d + 1 < nd && idx[d] == sizes[d]; ++d) {
        for (int k = 0; k < N; ++k) off[k] += strides[k][d + 1] - sizes[d] * strides[k][d];
        idx[d] = 0;
        ++idx[d + 1];
      }
    }
  }
};

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_STRIDED_H_
