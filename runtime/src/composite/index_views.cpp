// Views that pick positions along dims: narrow, slice, select, diagonal (an offset and strides).
#include "kiln/gen/composite.h"

#include <algorithm>
#include "kiln/gen/api/diagonal.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/select.h"
#include "kiln/gen/api/slice.h"

namespace kiln::composite {

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  KILN_CHECK(self.dim() > 0, IndexError, "slice", "self", "cannot slice a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "slice", "dim");
  KILN_CHECK(step > 0, ValueError, "slice", "step", "expected a positive step, got ", step);
  int64_t size = self.sizes()[d];
  // Python semantics: negative positions count from the end, then both clamp to [0, size]
  int64_t s = start.value_or(0), e = end.value_or(INT64_MAX);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return self.as_strided_view(sizes, strides, self.storage_offset() + s * self.strides()[d]);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  KILN_CHECK(self.dim() > 0, IndexError, "narrow", "self", "cannot narrow a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "narrow", "dim");
  int64_t size = self.sizes()[d];
  // negative starts count from the end; start == size is an empty narrow at the end
  KILN_CHECK(start >= -size && start <= size, IndexError, "narrow", "start", "start ", start,
             " is out of range for dimension ", d, " of size ", size, " (expected [", -size, ", ", size, "])");
  if (start < 0) start += size;
  KILN_CHECK(length >= 0, ValueError, "narrow", "length", "expected a non-negative length, got ", length);
  KILN_CHECK(start + length <= size, IndexError, "narrow", "length", "start (", start, ") + length (", length,
             ") exceeds dimension size (", size, ")");
  return composite::slice(self, d, start, start + length, 1);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  KILN_CHECK(self.dim() > 0, IndexError, "select", "self", "cannot select from a 0-dim tensor");
  int64_t d = wrap_dim(dim, self.dim(), "select", "dim");
  int64_t size = self.sizes()[d];
  KILN_CHECK(index >= -size && index < size, IndexError, "select", "index", "index ", index,
             " is out of range for tensor of size ", self.shape_str(), " at dimension ", d);
  if (index < 0) index += size;
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(size_t(d));
  strides.erase(size_t(d));
  return self.as_strided_view(sizes, strides, self.storage_offset() + index * self.strides()[d]);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t d1 = wrap_dim(dim1, self.dim(), "diagonal", "dim1");
  int64_t d2 = wrap_dim(dim2, self.dim(), "diagonal", "dim2");
  KILN_CHECK(d1 != d2, ValueError, "diagonal", "dim2", "diagonal dimensions cannot be identical, got ", dim1, " and ",
             dim2);
  int64_t n1 = self.sizes()[d1], n2 = self.sizes()[d2];
  int64_t diag_size = offset >= 0 ? std::max<int64_t>(std::min(n1, n2 - offset), 0)
                                  : std::max<int64_t>(std::min(n1 + offset, n2), 0);
  int64_t storage_offset = self.storage_offset();
  // an offset past the end gives an empty diagonal; leave the offset alone then
  if (diag_size > 0) storage_offset += offset >= 0 ? offset * self.strides()[d2] : -offset * self.strides()[d1];
  DimVector sizes(self.sizes()), strides(self.strides());
  // drop the larger dim first so the smaller one keeps its index
  for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    sizes.erase(size_t(d));
    strides.erase(size_t(d));
  }
  // NumPy semantics: the diagonal becomes the last dim
  sizes.push_back(diag_size);
  strides.push_back(self.strides()[d1] + self.strides()[d2]);
  return self.as_strided_view(sizes, strides, storage_offset);
}

}  // namespace kiln::composite
