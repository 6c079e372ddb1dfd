// Distances between batches of vectors: cosine_similarity, pairwise_distance, cdist (PyTorch 1.13's).
#include <algorithm>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/cdist.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/cosine_similarity.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/pairwise_distance.h"
#include "kiln/gen/api/sqrt.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/gen/api/unsqueeze.h"

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

// Every distance between the rows of x1 [*, P, M] and x2 [*, R, M] ([*, P, R]; the batch dims
// broadcast). Euclidean distances of many rows (p = 2 and P or R over 25, or compute_mode 1)
// come from one matrix product, |a|^2 + |b|^2 - 2 a.b clamped at 1e-30 before the root, as
// PyTorch's: fast, but cancellation makes close rows less exact (compute_mode 2 refuses it).
// Otherwise the norm of every difference, whose gradient is 0 where two rows coincide.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  KILN_CHECK(x1.dim() >= 2, ShapeError, "cdist", "x1", "cdist only supports at least 2D tensors, X1 got: ", x1.dim(),
             "D");
  KILN_CHECK(x2.dim() >= 2, ShapeError, "cdist", "x2", "cdist only supports at least 2D tensors, X2 got: ", x2.dim(),
             "D");
  KILN_CHECK(x1.size(-1) == x2.size(-1), ShapeError, "cdist", "x2",
             "X1 and X2 must have the same number of columns. X1: ", x1.size(-1), " X2: ", x2.size(-1));
  KILN_CHECK(x1.dtype() == x2.dtype(), DTypeError, "cdist", "x2", "expected x2 of x1's dtype ",
             dtype_name(x1.dtype()), ", got ", dtype_name(x2.dtype()));
  KILN_CHECK(p >= 0, ValueError, "cdist", "p", "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  KILN_CHECK(mode >= 0 && mode <= 2, ValueError, "cdist", "compute_mode", "possible modes: 0, 1, 2, but was: ", mode);
  const int64_t rows1 = x1.size(-2), rows2 = x2.size(-2);
  if (p == 2 && x1.numel() > 0 && x2.numel() > 0 && (mode == 1 || (mode == 0 && (rows1 > 25 || rows2 > 25)))) {
    const Tensor sq1 = kiln::sum(x1 * x1, IntArrayRef{-1}, true);                   // [*, P, 1]
    const Tensor sq2 = kiln::transpose(kiln::sum(x2 * x2, IntArrayRef{-1}, true), -2, -1);  // [*, 1, R]
    const Tensor squared = sq1 + sq2 - 2 * kiln::matmul(x1, kiln::transpose(x2, -2, -1));
    return kiln::sqrt(kiln::clamp(squared, 1e-30));
  }
  return kiln::norm(kiln::unsqueeze(x1, -2) - kiln::unsqueeze(x2, -3), p, IntArrayRef{-1});
}

}  // namespace kiln::composite
