// normalize (x / max(||x||_p, eps) along dim) and local_response_norm (each channel divided by
// (k + alpha * mean of the squares over `size` neighbouring channels)^beta), composed of other ops.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/clamp.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/pow.h"

namespace kiln::composite {

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  const Tensor n = kiln::norm(input, Scalar(p), dim, /*keepdim=*/true);
  return input / kiln::clamp(n, Scalar(eps), std::nullopt);
}

Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta, double k) {
  KILN_CHECK(input.dim() >= 3, ShapeError, "local_response_norm", "input",
             "Expected 3D or higher dimensionality input (got ", input.dim(), " dimensions)");
  KILN_CHECK(size > 0, ValueError, "local_response_norm", "size", "expected size > 0, got ", size);
  if (input.numel() == 0) return input;
  // 16-bit inputs compute in float32, as the other normalizations: the running sum's differences
  // would lose most of a 16-bit mantissa.
  const DType dt = input.dtype();
  if (dt == DType::Float16 || dt == DType::BFloat16)
    return local_response_norm(input.to(DType::Float32), size, alpha, beta, k).to(dt);
  const int64_t C = input.size(1);
  const Tensor sq = input * input;
  // The window of channel c is [c - size / 2, c + (size - 1) / 2], zero-padded as PyTorch's
  // average pool (always divided by size): a difference of the running sum over channels, with
  // the ends clamped (no padded copy, so any size costs the same).
  DimVector first = input.sizes();
  first[1] = 1;
  const Tensor running =
      kiln::cat({kiln::zeros(first, TensorOptions(input.dtype(), input.device())), kiln::cumsum(sq, 1)}, 1);
  const TensorOptions longs(DType::Int64, input.device());
  const Tensor c = kiln::arange(C, longs);
  const Tensor hi = kiln::clamp(c + ((size - 1) / 2 + 1), std::nullopt, Scalar(C));
  const Tensor lo = kiln::clamp(c - size / 2, Scalar(int64_t(0)), std::nullopt);
  const Tensor window = kiln::index_select(running, 1, hi) - kiln::index_select(running, 1, lo);
  return input / kiln::pow(window * (alpha / double(size)) + k, Scalar(beta));
}

}  // namespace kiln::composite
