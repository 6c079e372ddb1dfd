// Indexing composites over the gather/scatter kernels: take_along_dim.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/broadcast_to.h"
#include "kiln/gen/api/gather.h"
#include "kiln/pointwise.h"

namespace kiln::composite {

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  const char* op = "take_along_dim";
  KILN_CHECK(indices.dtype() == DType::Int64, DTypeError, op, "indices", "expected int64 indices, got ",
             dtype_name(indices.dtype()));
  if (!dim) return gather(self.reshape({-1}), 0, indices.reshape({-1}));
  KILN_CHECK(self.dim() == indices.dim(), ShapeError, op, "indices",
             "input and indices should have the same number of dimensions, but got ", self.dim(),
             " dimensions for input, and ", indices.dim(), " dimensions for indices");
  if (self.dim() == 0) return gather(self, 0, indices);
  const int64_t d = wrap_dim(*dim, self.dim(), op, "dim");
  // Broadcast self and indices against each other in every dim but d.
  DimVector self_sizes = self.sizes();
  self_sizes[size_t(d)] = indices.size(d);
  const DimVector shape = pointwise::broadcast_shapes(self_sizes, indices.sizes(), op, "indices");
  DimVector self_shape = shape;
  self_shape[size_t(d)] = self.size(d);
  return gather(broadcast_to(self, self_shape), d, broadcast_to(indices, shape));
}

}  // namespace kiln::composite
