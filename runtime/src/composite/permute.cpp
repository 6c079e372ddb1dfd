// Views that reorder dims: transpose, t, permute (sizes and strides move together, no copy).
#include "kiln/gen/composite.h"

#include <algorithm>
#include "kiln/gen/api/permute.h"
#include "kiln/gen/api/t.h"
#include "kiln/gen/api/transpose.h"

namespace kiln::composite {

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  // a 0-d tensor accepts dims 0 and -1, as in PyTorch
  int64_t ndim = std::max<int64_t>(self.dim(), 1);
  int64_t d0 = wrap_dim(dim0, ndim, "transpose", "dim0");
  int64_t d1 = wrap_dim(dim1, ndim, "transpose", "dim1");
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

Tensor t(const Tensor& self) {
  KILN_CHECK(self.dim() <= 2, ShapeError, "t", "self", "expected a tensor with <= 2 dims, got ", self.dim(),
             "-D; use transpose(dim0, dim1) or permute");
  if (self.dim() < 2) return self.as_strided_view(self.sizes(), self.strides(), self.storage_offset());
  return composite::transpose(self, 0, 1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  int64_t ndim = self.dim();
  KILN_CHECK(int64_t(dims.size()) == ndim, ShapeError, "permute", "dims", "number of dims don't match: the tensor has ",
             ndim, " dims, dims ", shape_str(dims), " has ", dims.size());
  DimVector sizes(size_t(ndim), 0), strides(size_t(ndim), 0);
  SmallVector<bool, 8> seen(size_t(ndim), false);
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t d = wrap_dim(dims[i], ndim, "permute", "dims");
    KILN_CHECK(!seen[d], ValueError, "permute", "dims", "repeated dim ", dims[i], " in ", shape_str(dims));
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

}  // namespace kiln::composite
