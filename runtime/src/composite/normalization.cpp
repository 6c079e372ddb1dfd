// Normalizations over other ops: layer_norm (native_layer_norm's output), rms_norm (composed;
// autograd records the parts).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/meta/normalization.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/native_layer_norm.h"
#include "kiln/gen/api/rsqrt.h"
#include "kiln/gen/api/square.h"

namespace kiln::composite {

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool /*cudnn_enable: no cuDNN path*/) {
  return std::get<0>(kiln::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) dims, in float32 for 16-bit inputs.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, std::optional<double> eps) {
  // normalized_shape against input: layer_norm's checks and messages (weight's dtype may differ here)
  meta::layer_norm("rms_norm", input, normalized_shape, Tensor(), Tensor(), 0.0);
  const int64_t axis = input.dim() - int64_t(normalized_shape.size());
  if (weight.defined())
    KILN_CHECK(weight.sizes().equals(normalized_shape), ShapeError, "rms_norm", "weight",
               "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
               shape_str(weight.sizes()), " and normalized_shape = ", shape_str(normalized_shape));
  const DType dt = input.dtype();
  const bool reduced = dt == DType::Float16 || dt == DType::BFloat16;
  const double e = eps ? *eps : finfo(dt).eps;
  DimVector dims;
  for (int64_t d = axis; d < input.dim(); ++d) dims.push_back(d);
  const Tensor x = reduced ? input.to(DType::Float32) : input;
  Tensor y = x * kiln::rsqrt(kiln::mean(kiln::square(x), dims.ref(), /*keepdim=*/true) + e);
  if (reduced) y = y.to(dt);
  return weight.defined() ? y * weight : y;
}

}  // namespace kiln::composite
