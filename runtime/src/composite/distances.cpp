// Distances between batches of vectors: cosine_similarity, pairwise_distance (PyTorch 1.13's).
#include <algorithm>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/cosine_similarity.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/pairwise_distance.h"
#include "kiln/gen/api/sum.h"

namespace kiln::composite {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const DimVector shape = pointwise::broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity", "x2");
  Tensor a = kiln::expand(x1, shape), b = kiln::expand(x2, shape);
  // Each vector is divided by its norm first (no overflow in the product); PyTorch clamps the
  // norms to eps under no_grad: clamped values, unclamped gradients.
  auto clamped_norm = [&](const Tensor& v) {
    Tensor n = kiln::norm(v, 2, IntArrayRef{dim}, true);
    Tensor held = n.detach();
    return n + (kiln::clamp(held, eps) - held);
  };
  return kiln::sum((a / clamped_norm(a)) * (b / clamped_norm(b)), IntArrayRef{dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  (void)pointwise::broadcast_shapes(x1.sizes(), x2.sizes(), "pairwise_distance", "x2");
  const int64_t innermost = std::max(x1.dim(), x2.dim()) - 1;
  return kiln::norm(x1 - x2 + eps, p, IntArrayRef{innermost}, keepdim);
}

}  // namespace kiln::composite
