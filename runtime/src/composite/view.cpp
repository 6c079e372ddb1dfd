// view and reshape: a new shape over the same elements (ATen's infer_size and computeStride).
#include "kiln/gen/composite.h"

#include <optional>
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/view.h"

namespace kiln::composite {

namespace {

// Resolves one -1 in `shape` against `numel` and checks the element count.
DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op, const char* arg) {
  DimVector res(shape);
  std::optional<size_t> infer_dim;
  int64_t newsize = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      KILN_CHECK(!infer_dim, ValueError, op, arg, "only one dimension can be inferred, got ", shape_str(shape));
      infer_dim = d;
    } else {
      KILN_CHECK(shape[d] >= 0, ValueError, op, arg, "invalid shape dimension ", shape[d], " in ", shape_str(shape));
      newsize *= shape[d];
    }
  }
  if (numel == newsize || (infer_dim && newsize > 0 && numel % newsize == 0)) {
    if (infer_dim) {
      // with a 0 among the given sizes, -1 could be anything
      KILN_CHECK(newsize != 0, ShapeError, op, arg, "cannot reshape a tensor of 0 elements into shape ",
                 shape_str(shape), " because the unspecified dimension size -1 can be any value and is ambiguous");
      res[*infer_dim] = numel / newsize;
    }
    return res;
  }
  KILN_FAIL(ShapeError, op, arg, "shape ", shape_str(shape), " is invalid for input of size ", numel);
}

// Strides that let `newshape` walk the same elements as (oldshape, oldstride), or nothing when a
// new dim would span two non-contiguous chunks of the old layout (ATen's computeStride).
std::optional<DimVector> compute_stride(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  if (oldshape.empty()) return DimVector(newshape.size(), 1);
  int64_t numel = numel_of(oldshape);
  if (numel == 0 && oldshape.equals(newshape)) return DimVector(oldstride);
  DimVector newstride(newshape.size(), 0);
  if (numel == 0) {
    for (int64_t d = int64_t(newshape.size()) - 1; d >= 0; --d)
      newstride[d] = d == int64_t(newshape.size()) - 1 ? 1 : std::max<int64_t>(newshape[d + 1], 1) * newstride[d + 1];
    return newstride;
  }
  int64_t view_d = int64_t(newshape.size()) - 1;
  // old dims are grouped into chunks that are contiguous among themselves
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = int64_t(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    bool chunk_ends = tensor_d == 0 || (oldshape[tensor_d - 1] != 1 &&
                                        oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
      newstride[view_d] = view_numel * chunk_base_stride;
      view_numel *= newshape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = oldstride[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector shape = infer_size(size, self.numel(), "view", "size");
  std::optional<DimVector> strides = compute_stride(self.sizes(), self.strides(), shape);
  KILN_CHECK(strides.has_value(), ShapeError, "view", "size", "view size ", shape_str(shape),
             " is not compatible with input tensor's size ", self.shape_str(), " and stride ",
             shape_str(self.strides()),
             " (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return self.as_strided_view(shape, *strides, self.storage_offset());
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  DimVector sizes = infer_size(shape, self.numel(), "reshape", "shape");
  if (std::optional<DimVector> strides = compute_stride(self.sizes(), self.strides(), sizes))
    return self.as_strided_view(sizes, *strides, self.storage_offset());
  // the layout does not allow a view: copy into a contiguous tensor of the new shape
  Tensor out = kiln::empty(sizes, self.options());
  out.as_strided_view(self.sizes(), contiguous_strides(self.sizes()), 0).copy_(self);
  return out;
}

}  // namespace kiln::composite
