// Backward helpers of the pooling ops (see kiln/autograd/formulas.h).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/flatten.h"
#include "kiln/gen/api/gather.h"

namespace kiln {

TensorBase max_pool_double_backward(const TensorBase& grad_in, const TensorBase& indices_in, int64_t spatial_dims) {
  const Tensor grad(grad_in), indices(indices_in);
  const int64_t d = grad.dim();
  KILN_CHECK(indices.dim() == d && d > spatial_dims, ShapeError, "max_pool_double_backward", "indices",
             "expected indices with ", d, " dims, got ", shape_str(indices.sizes()));
  // planes of the gradient flattened; each output reads its plane at its saved index
  const Tensor flat_grad = kiln::flatten(grad, d - spatial_dims, d - 1);
  const Tensor flat_indices = kiln::flatten(indices, d - spatial_dims, d - 1);
  return kiln::gather(flat_grad, d - spatial_dims, flat_indices).view(indices.sizes());
}

DimVector trailing_sizes(IntArrayRef sizes, int64_t n) {
  DimVector out;
  for (size_t i = sizes.size() - size_t(n); i < sizes.size(); ++i) out.push_back(sizes[i]);
  return out;
}

}  // namespace kiln
