// Backward helpers of the sorting ops (see kiln/autograd/formulas.h). Written with
// differentiable ops only, so each can itself be differentiated.
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/_cummaxmin_backward.h"
#include "kiln/gen/api/cat.h"

namespace kiln {

TensorBase topk_backward(const TensorBase& grad_in, const TensorBase& indices_in, IntArrayRef sizes, int64_t dim) {
  const Tensor grad(grad_in);
  const Tensor indices(indices_in);
  if (sizes.empty()) return grad;  // a 0-d topk (k = 1) is the identity
  const int64_t d = wrap_dim(dim, int64_t(sizes.size()), "topk_backward");
  const int64_t rest = sizes[size_t(d)] - grad.size(d);
  if (rest == 0) return _cummaxmin_backward(grad, indices, d);
  // Padded to self's length with zero gradients sent to index 0, the scatter-add of
  // cummax's gradient places each of the k values where it came from.
  DimVector pad(grad.sizes());
  pad[size_t(d)] = rest;
  const Tensor g = cat({grad, zeros(pad, grad.options())}, d);
  const Tensor i = cat({indices, zeros(pad, indices.options())}, d);
  return _cummaxmin_backward(g, i, d);
}

}  // namespace kiln
