#ifndef KILN_KERNELS_COMMON_FOREACH_INDEX_H_
#define KILN_KERNELS_COMMON_FOREACH_INDEX_H_
// Element addressing for the kernels of ops over Tensor lists (the amp unscale, next the fused
// optimizers), shared by the CPU and CUDA kernels and host-tested (tests/test_cuda_foreach_plan.cpp).
// An elementwise op in place may visit a tensor's elements in any order, so a tensor whose
// elements fill their span exactly (contiguous, transposed-contiguous, any permutation) is one
// dense run from its lowest element; any other layout (a slice with gaps) is walked by a
// StridedIndex: linear index -> element offset, dims of size 1 dropped.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::foreach_index {

inline constexpr int kMaxDims = 16;

struct StridedIndex {
  int dims = 0;  // outermost first
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];  // in elements

  KILN_HOST_DEVICE int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = dims - 1; d >= 0; --d) {
      const int64_t q = linear / sizes[d];
      off += (linear - q * sizes[d]) * strides[d];
      linear = q;
    }
    return off;
  }
};

// The tensor's geometry without its size-1 dims (their strides mean nothing). Returns false
// when it has more than kMaxDims dims of size > 1.
inline bool make_index(int ndim, const int64_t* sizes, const int64_t* strides, StridedIndex& out) {
  out.dims = 0;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    if (out.dims == kMaxDims) return false;
    out.sizes[out.dims] = sizes[d];
    out.strides[out.dims] = strides[d];
    ++out.dims;
  }
  return true;
}

// Whether the elements fill [lowest, lowest + numel) exactly, each once: sorted by stride, each
// dim's stride is the product of the sizes of the dims below it. Negative strides never are.
// Sets *lowest to the offset of the lowest element (0 for non-negative strides).
inline bool dense_span(const StridedIndex& ix, int64_t* lowest) {
  *lowest = 0;
  bool used[kMaxDims] = {};
  int64_t expected = 1;
  for (int k = 0; k < ix.dims; ++k) {
    int best = -1;
    for (int d = 0; d < ix.dims; ++d)
      if (!used[d] && (best < 0 || ix.strides[d] < ix.strides[best])) best = d;
    if (ix.strides[best] != expected) return false;
    used[best] = true;
    expected *= ix.sizes[best];
  }
  return true;
}

// Blocks of `threads` for a grid-stride loop over n elements (a CUDA launch per tensor): enough
// to cover n, at most max_blocks (each thread then loops), at least 1.
inline int64_t grid_blocks(int64_t n, int threads, int64_t max_blocks) {
  const int64_t want = (n + threads - 1) / threads;
  return want < 1 ? 1 : (want > max_blocks ? max_blocks : want);
}

}  // namespace kiln::foreach_index
#endif  // KILN_KERNELS_COMMON_FOREACH_INDEX_H_
