#ifndef KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
// The [outer, size, inner] view of a tensor around one dim: the layout every kernel that works
// along a dim (scans, softmax, sort) computes in, on every backend.
#include <cstdint>
#include "kiln/array_ref.h"

namespace kiln::meta {

struct DimSplit {
  int64_t outer = 1, size = 1, inner = 1;
};

// `sizes` split around the (already wrapped) dim; a 0-d shape is [1, 1, 1].
inline DimSplit split_at_dim(IntArrayRef sizes, int64_t dim) {
  DimSplit s;
  const int64_t nd = int64_t(sizes.size());
  if (nd == 0) return s;
  s.size = sizes[size_t(dim)];
  for (int64_t i = 0; i < dim; ++i) s.outer *= sizes[size_t(i)];
  for (int64_t i = dim + 1; i < nd; ++i) s.inner *= sizes[size_t(i)];
  return s;
}

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_ALONG_DIM_H_
