#ifndef KILN_RUNTIME_INCLUDE_KILN_STRIDED_VIEWS_H_
#define KILN_RUNTIME_INCLUDE_KILN_STRIDED_VIEWS_H_
// Metadata views for kernels: a permutation, a transpose or a broadcast of a TensorBase over the
// same storage, without autograd (the ops permute/transpose/expand are Tensor methods, which
// kernels do not see). Arguments are the kernel's own, already checked by the meta step.
#include <utility>
#include "kiln/tensor_base.h"

namespace kiln::views {

// Dim i of the result is dim perm[i] of t.
inline TensorBase permuted(const TensorBase& t, IntArrayRef perm) {
  DimVector sizes(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    sizes[i] = t.sizes()[size_t(perm[i])];
    strides[i] = t.strides()[size_t(perm[i])];
  }
  return t.as_strided_view(sizes, strides, t.storage_offset());
}

inline TensorBase transposed(const TensorBase& t, int64_t a, int64_t b) {
  DimVector sizes(t.sizes()), strides(t.strides());
  std::swap(sizes[size_t(a)], sizes[size_t(b)]);
  std::swap(strides[size_t(a)], strides[size_t(b)]);
  return t.as_strided_view(sizes, strides, t.storage_offset());
}

// t broadcast to `sizes`, which it must broadcast to (t's dims align with the trailing ones;
// broadcast dims get stride 0).
inline TensorBase expanded(const TensorBase& t, IntArrayRef sizes) {
  const size_t lead = sizes.size() - size_t(t.dim());
  DimVector strides(sizes.size(), 0);
  for (size_t i = 0; i < size_t(t.dim()); ++i) strides[lead + i] = t.sizes()[i] == sizes[lead + i] ? t.strides()[i] : 0;
  return t.as_strided_view(sizes, strides, t.storage_offset());
}

}  // namespace kiln::views
#endif  // KILN_RUNTIME_INCLUDE_KILN_STRIDED_VIEWS_H_
