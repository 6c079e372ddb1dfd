// Advanced indexing (index.Tensor, index_put, index_put_): self[indices] and
// self[indices] = values with PyTorch's rules. Every index is checked before anything is read
// or written; then the indexed dims become one flat dim of M = their sizes' product and the
// index tensors one flat position into it, so the work is one index_select / index_copy_ /
// index_add_ along that dim (differentiable through those ops).
#include <algorithm>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/aminmax.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/lt.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/nonzero.h"
#include "kiln/gen/api/permute.h"
#include "kiln/gen/api/stack.h"
#include "kiln/gen/api/where.h"
#include "kiln/pointwise.h"

namespace kiln::composite {
namespace {

// The index list resolved: the dims of self it indexes (increasing), one flat position per
// element of the indices' broadcast shape, and where the result puts that shape.
struct Resolved {
  std::vector<int64_t> dims;
  DimVector shape;        // the index tensors' broadcast shape
  Tensor flat;            // int64 of `shape`: sum over dims of index * stride in the flat dim
  int64_t flat_size = 1;  // M: the product of the indexed dims' sizes
  bool adjacent = true;   // consecutive dims: the result keeps `shape` where they were
  bool any = false;       // false: every entry was None
};

bool is_mask(const Tensor& t) { return t.dtype() == DType::Bool || t.dtype() == DType::UInt8; }

// Each index value in [-size, size) (IndexError naming the first bad one), negatives wrapped.
// One read to the host for the minimum and maximum.
Tensor checked(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  if (index.numel() == 0) return index;
  const auto [lo_t, hi_t] = kiln::aminmax(index);
  const std::vector<int64_t> lohi = kiln::stack({lo_t, hi_t}).to_vector<int64_t>();
  const int64_t bad = lohi[1] >= size ? lohi[1] : lohi[0];
  KILN_CHECK(lohi[0] >= -size && lohi[1] < size, IndexError, op, "indices", "index ", bad,
             " is out of bounds for dimension ", dim, " with size ", size);
  return lohi[0] < 0 ? kiln::where(kiln::lt(index, 0), kiln::add(index, size), index) : index;
}

Resolved resolve(const char* op, const Tensor& self, const TensorList& indices) {
  int64_t used = 0;
  for (const Tensor& t : indices) used += t.defined() && is_mask(t) ? t.dim() : 1;
  KILN_CHECK(used <= self.dim(), IndexError, op, "indices", "too many indices for tensor of dimension ", self.dim(),
             " (got ", used, ")");
  Resolved r;
  std::vector<Tensor> tensors;
  int64_t d = 0;
  for (const Tensor& t : indices) {
    if (!t.defined()) {
      ++d;
      continue;
    }
    if (is_mask(t)) {
      // a mask covers t.dim() dims; its nonzero places become one int64 index per dim
      KILN_CHECK(t.dim() > 0, IndexError, op, "indices",
                 "a 0-d bool index is not an index.Tensor index (index with a 1-d mask or unsqueeze first)");
      for (int64_t j = 0; j < t.dim(); ++j)
        KILN_CHECK(t.size(j) == self.size(d + j), IndexError, op, "indices", "The shape of the mask ",
                   shape_str(t.sizes()), " at index ", j, " does not match the shape of the indexed tensor ",
                   shape_str(self.sizes()), " at index ", d + j);
      const Tensor places = kiln::nonzero(t);
      for (int64_t j = 0; j < t.dim(); ++j) {
        r.dims.push_back(d + j);
        tensors.push_back(places.select(1, j));
      }
      d += t.dim();
      continue;
    }
    KILN_CHECK(t.dtype() == DType::Int64, IndexError, op, "indices",
               "tensors used as indices must be long, byte or bool tensors, got ", dtype_name(t.dtype()));
    KILN_CHECK(t.device() == self.device(), DeviceError, op, "indices", "expected indices on self's device ",
               self.device().str(), ", got ", t.device().str());
    r.dims.push_back(d++);
    tensors.push_back(t);
  }
  r.any = !tensors.empty();
  if (!r.any) return r;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (k == 0) {
      r.shape = tensors[0].sizes();
      continue;
    }
    try {
      r.shape = pointwise::broadcast_shapes(r.shape, tensors[k].sizes(), op, "indices");
    } catch (const ShapeError&) {
      std::string shapes;
      for (const Tensor& t : tensors) shapes += (shapes.empty() ? "" : ", ") + shape_str(t.sizes());
      KILN_FAIL(IndexError, op, "indices",
                "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
    }
  }
  for (size_t k = 1; k < r.dims.size(); ++k) r.adjacent = r.adjacent && r.dims[k] == r.dims[k - 1] + 1;
  // Horner's rule over the indexed dims: flat = (i0 * s1 + i1) * s2 + i2 ...
  for (size_t k = 0; k < tensors.size(); ++k) {
    const int64_t size = self.size(r.dims[k]);
    const Tensor i = checked(op, tensors[k], r.dims[k], size);
    r.flat = k == 0 ? i : kiln::add(kiln::mul(r.flat, size), i);
    r.flat_size *= size;
  }
  if (!r.flat.sizes().equals(r.shape)) r.flat = kiln::expand(r.flat, r.shape);
  r.flat = r.flat.reshape({-1});
  return r;
}

// `from` broadcasts to `to` without changing it (values onto self[indices]).
bool broadcasts_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  const size_t shift = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[d + shift]) return false;
  return true;
}

// The dims of self that are not indexed, in order.
std::vector<int64_t> other_dims(const Tensor& self, const Resolved& r) {
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(r.dims.begin(), r.dims.end(), d) == r.dims.end()) rest.push_back(d);
  return rest;
}

// How self is seen with the indexed dims as one: adjacent, [before..., M, after...] indexed
// along `dim` = the first indexed dim; else permuted to [M, others...] indexed along 0. `result`
// is self[indices]'s shape.
struct Layout {
  std::vector<int64_t> perm;  // empty: self's own order
  DimVector folded, result;
  int64_t dim = 0;
};

Layout layout_of(const Tensor& self, const Resolved& r) {
  Layout l;
  const std::vector<int64_t> rest = other_dims(self, r);
  if (r.adjacent) {
    l.dim = r.dims.front();
    for (int64_t d = 0; d < l.dim; ++d) l.folded.push_back(self.size(d));
    l.result = l.folded;
    l.folded.push_back(r.flat_size);
    for (int64_t s : r.shape) l.result.push_back(s);
    for (int64_t d = r.dims.back() + 1; d < self.dim(); ++d) {
      l.folded.push_back(self.size(d));
      l.result.push_back(self.size(d));
    }
    return l;
  }
  l.perm = r.dims;
  l.perm.insert(l.perm.end(), rest.begin(), rest.end());
  l.folded.push_back(r.flat_size);
  l.result = r.shape;
  for (int64_t d : rest) {
    l.folded.push_back(self.size(d));
    l.result.push_back(self.size(d));
  }
  return l;
}

// The indexed dims [first, last] of t (seen in `perm` order) merge into one without a copy.
bool foldable(const Tensor& t, const Resolved& r) {
  for (size_t k = 1; k < r.dims.size(); ++k) {
    const int64_t a = r.dims[k - 1], b = r.dims[k];
    if (t.size(a) != 1 && t.size(b) != 1 && t.stride(a) != t.stride(b) * t.size(b)) return false;
  }
  return true;
}

}  // namespace

Tensor index(const Tensor& self, const TensorList& indices) {
  const char* op = "index";
  const Resolved r = resolve(op, self, indices);
  if (!r.any) return self.clone();
  const Layout l = layout_of(self, r);
  const Tensor seen = l.perm.empty() ? self : kiln::permute(self, l.perm);
  return kiln::index_select(seen.reshape(l.folded), l.dim, r.flat).reshape(l.result);
}

Tensor& index_put_(Tensor& self, const TensorList& indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  KILN_CHECK(values.dtype() == self.dtype(), DTypeError, op, "values",
             "Index put requires the source and destination dtypes match, got ", dtype_name(self.dtype()),
             " for the destination and ", dtype_name(values.dtype()), " for the source");
  KILN_CHECK(values.device() == self.device(), DeviceError, op, "values", "expected values on self's device ",
             self.device().str(), ", got ", values.device().str());
  const Resolved r = resolve(op, self, indices);  // every index checked before anything is written
  const DimVector target = r.any ? layout_of(self, r).result : DimVector(self.sizes());
  KILN_CHECK(broadcasts_to(values.sizes(), target), ShapeError, op, "values", "shape mismatch: value tensor of shape ",
             shape_str(values.sizes()), " cannot be broadcast to indexing result of shape ", shape_str(target));
  if (!r.any) {
    if (accumulate) return self.copy_(kiln::add(self, values));
    return self.copy_(values);
  }
  const Layout l = layout_of(self, r);
  const Tensor v = (values.sizes().equals(target) ? values : kiln::expand(values, target)).reshape([&] {
    DimVector s = l.folded;
    s[size_t(l.dim)] = r.flat.numel();
    return s;
  }());
  Tensor seen = l.perm.empty() ? self : kiln::permute(self, l.perm);
  // write through a view when the indexed dims fold into one; else into a folded copy, then back
  const bool in_view = l.perm.empty() && foldable(self, r);
  Tensor folded = in_view ? seen.view(l.folded) : seen.reshape(l.folded).clone();
  if (accumulate) {
    folded.index_add_(l.dim, r.flat, v);
  } else {
    folded.index_copy_(l.dim, r.flat, v);
  }
  if (!in_view) seen.copy_(folded.view(seen.sizes()));
  return self;
}

Tensor index_put(const Tensor& self, const TensorList& indices, const Tensor& values, bool accumulate) {
  Tensor result = self.clone();
  return kiln::index_put_(result, indices, values, accumulate);
}

}  // namespace kiln::composite
