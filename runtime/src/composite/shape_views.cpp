// Views that add, drop or merge dims: expand, squeeze, unsqueeze, flatten.
#include "kiln/gen/composite.h"

#include <algorithm>
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/flatten.h"
#include "kiln/gen/api/squeeze.h"
#include "kiln/gen/api/unsqueeze.h"

namespace kiln::composite {

Tensor expand(const Tensor& self, IntArrayRef size, bool implicit) {
  int64_t ndim = int64_t(size.size()), tensor_dim = self.dim();
  KILN_CHECK(ndim >= tensor_dim, ShapeError, "expand", "size", "the number of sizes provided (", ndim,
             ") must be greater or equal to the number of dimensions in the tensor (", tensor_dim, ")");
  DimVector sizes(size_t(ndim), 0), strides(size_t(ndim), 0);
  // walk from the last dim, aligning `size` with self's dims from the right (ATen's inferExpandGeometry)
  for (int64_t i = ndim - 1; i >= 0; --i) {
    int64_t dim = tensor_dim - 1 - (ndim - 1 - i);
    int64_t cur = dim >= 0 ? self.sizes()[dim] : 1;
    // a new leading dim of size 1 gets the stride a contiguous layout would give it
    int64_t stride = dim >= 0 ? self.strides()[dim] : (i + 1 < ndim ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = size[i];
    if (target == -1) {
      KILN_CHECK(dim >= 0, ShapeError, "expand", "size", "the expanded size -1 isn't allowed in a leading, "
                 "non-existing dimension ", i);
      target = cur;
    }
    KILN_CHECK(target >= 0, ValueError, "expand", "size", "invalid size ", target, " at dimension ", i, " in ",
               shape_str(size));
    if (cur != target) {
      KILN_CHECK(cur == 1, ShapeError, "expand", "size", "the expanded size of the tensor (", target,
                 ") must match the existing size (", cur, ") at non-singleton dimension ", i, ".  Target sizes: ",
                 shape_str(size), ".  Tensor sizes: ", self.shape_str());
      cur = target;
      stride = 0;  // every index along the dim reads the one element
    }
    sizes[i] = cur;
    strides[i] = stride;
  }
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

Tensor squeeze_dim(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "squeeze", "dim");
  DimVector sizes(self.sizes()), strides(self.strides());
  // a dim of another size stays, as in PyTorch (no error)
  if (self.dim() > 0 && sizes[d] == 1) {
    sizes.erase(size_t(d));
    strides.erase(size_t(d));
  }
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze", "dim");
  DimVector sizes(self.sizes()), strides(self.strides());
  // the stride the new dim would have in a layout where it sits between its neighbours
  int64_t stride = d >= self.dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(size_t(d), 1);
  strides.insert(size_t(d), stride);
  return self.as_strided_view(sizes, strides, self.storage_offset());
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  int64_t ndim = std::max<int64_t>(self.dim(), 1);
  int64_t start = wrap_dim(start_dim, ndim, "flatten", "start_dim");
  int64_t end = wrap_dim(end_dim, ndim, "flatten", "end_dim");
  KILN_CHECK(start <= end, ValueError, "flatten", "end_dim", "start_dim (", start_dim,
             ") cannot come after end_dim (", end_dim, ")");
  if (self.dim() == 0) return composite::reshape(self, {1});
  if (start == end) return self.as_strided_view(self.sizes(), self.strides(), self.storage_offset());
  DimVector shape;
  for (int64_t d = 0; d < start; ++d) shape.push_back(self.sizes()[d]);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= self.sizes()[d];
  shape.push_back(merged);
  for (int64_t d = end + 1; d < self.dim(); ++d) shape.push_back(self.sizes()[d]);
  // a view when the merged dims are contiguous among themselves, else a copy (as PyTorch)
  return composite::reshape(self, shape);
}

}  // namespace kiln::composite
