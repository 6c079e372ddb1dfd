// cat: concatenation along an existing dim, with PyTorch's type promotion and its legacy rule
// that 1-D empty tensors (shape [0]) are skipped whatever the other shapes are.
#include "kiln/gen/composite.h"
#include "kiln/pointwise.h"

#include <vector>
#include "kiln/gen/api/cat.h"

namespace kiln::composite {

namespace {
bool skipped(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }
}  // namespace

Tensor cat(const TensorList& tensors, int64_t dim) {
  KILN_CHECK(!tensors.empty(), ValueError, "cat", "tensors", "expected a non-empty list of tensors");
  std::vector<const TensorBase*> ptrs;
  ptrs.reserve(tensors.size());
  const Tensor* ref = nullptr;  // first tensor that is not skipped: the shape the others must match
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    KILN_CHECK(t.defined(), ValueError, "cat", "tensors", "tensor ", i, " is undefined");
    KILN_CHECK(t.dim() > 0, ShapeError, "cat", "tensors", "zero-dimensional tensor (at position ", i,
               ") cannot be concatenated");
    KILN_CHECK(t.device() == tensors[0].device(), DeviceError, "cat", "tensors", "expected all tensors on ",
               tensors[0].device().str(), ", but tensor ", i, " is on ", t.device().str());
    ptrs.push_back(&t);
    if (!ref && !skipped(t)) ref = &t;
  }
  // skipped tensors still take part in promotion, as in PyTorch
  DType dtype = pointwise::result_type(ptrs.data(), int(ptrs.size()));
  TensorOptions opts(dtype, tensors[0].device());
  if (!ref) return kiln::empty(DimVector{0}, opts);

  int64_t d = wrap_dim(dim, ref->dim(), "cat", "dim");
  DimVector out_sizes(ref->sizes());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    KILN_CHECK(t.dim() == ref->dim(), ShapeError, "cat", "tensors", "tensors must have the same number of dims: got ",
               ref->dim(), " and ", t.dim(), " for tensor ", i);
    for (int64_t k = 0; k < t.dim(); ++k)
      KILN_CHECK(k == d || t.sizes()[k] == ref->sizes()[k], ShapeError, "cat", "tensors",
                 "sizes of tensors must match except in dimension ", d, ": expected size ", ref->sizes()[k],
                 " but got size ", t.sizes()[k], " for tensor ", i, " in the list (dimension ", k, ")");
    total += t.sizes()[d];
  }
  out_sizes[d] = total;
  Tensor out = kiln::empty(out_sizes, opts);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    int64_t n = t.sizes()[d];
    if (n > 0 && t.numel() > 0) composite::narrow(out, d, offset, n).copy_(t);  // copy_ casts to the common dtype
    offset += n;
  }
  return out;
}

}  // namespace kiln::composite
