#ifndef KILN_KERNELS_CPU_REDUCE_DIMS_H_
#define KILN_KERNELS_CPU_REDUCE_DIMS_H_
// Which dims a reduction removes and the shape of its result.
// PyTorch rules: dims wrap (0-d tensors accept 0 and -1), a dim may appear only once,
// an empty list (or None) reduces every dim, keepdim leaves size-1 dims in place.
#include "kiln/tensor.h"

namespace kiln::cpu {

struct ReduceDims {
  SmallVector<uint8_t, 8> reduced;  // per input dim: 1 when reduced
  DimVector out_sizes;              // result shape (keepdim applied)
  int64_t reduced_numel = 1;        // elements combined into each output
};

inline ReduceDims reduce_dims(const Tensor& self, IntArrayRef dims, bool keepdim, const char* op) {
  const int64_t nd = self.dim();
  ReduceDims r;
  r.reduced.resize(size_t(nd), uint8_t(dims.empty() ? 1 : 0));
  // A 0-d tensor behaves as if it had one dim of size 1 (dim 0 or -1 are valid, reduce nothing).
  const int64_t wrap_nd = nd == 0 ? 1 : nd;
  SmallVector<uint8_t, 8> seen(size_t(wrap_nd), uint8_t(0));
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, wrap_nd, op, "dim");
    KILN_CHECK(!seen[size_t(w)], ValueError, op, "dim", "dim ", w, " appears multiple times in the list of dims");
    seen[size_t(w)] = 1;
    if (nd > 0) r.reduced[size_t(w)] = 1;
  }
  IntArrayRef sizes = self.sizes();
  for (int64_t d = 0; d < nd; ++d) {
    if (r.reduced[size_t(d)]) {
      r.reduced_numel *= sizes[size_t(d)];
      if (keepdim) r.out_sizes.push_back(1);
    } else {
      r.out_sizes.push_back(sizes[size_t(d)]);
    }
  }
  return r;
}

inline ReduceDims reduce_dims(const Tensor& self, const OptIntList& dims, bool keepdim, const char* op) {
  return reduce_dims(self, dims.has_value() ? dims.value() : IntArrayRef(), keepdim, op);
}

// One-dim form (max.dim, all.dim, prod.dim_int ...).
inline ReduceDims reduce_one_dim(const Tensor& self, int64_t dim, bool keepdim, const char* op) {
  return reduce_dims(self, IntArrayRef(dim), keepdim, op);
}

// PyTorch's errors for max/min-like reductions, which have no identity element.
inline void check_nonempty_reduction(const Tensor& self, const ReduceDims& r, bool all_dims, const char* op) {
  if (all_dims) {
    KILN_CHECK(self.numel() != 0, IndexError, op, "self", op,
               "(): Expected reduction dim to be specified for input.numel() == 0. "
               "Specify the reduction dim with the 'dim' argument.");
    return;
  }
  for (int64_t d = 0; d < self.dim(); ++d)
    KILN_CHECK(!r.reduced[size_t(d)] || self.size(d) != 0, IndexError, op, "dim", op,
               "(): Expected reduction dim ", d, " to have non-zero size.");
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_REDUCE_DIMS_H_
