// Activations composed of other ops (autograd records the parts): glu, prelu, rrelu.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/gt.h"
#include "kiln/gen/api/leaky_relu.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/sigmoid.h"
#include "kiln/gen/api/uniform_.h"
#include "kiln/gen/api/where.h"

namespace kiln::composite {

Tensor glu(const Tensor& self, int64_t dim) {
  KILN_CHECK(self.dim() > 0, ShapeError, "glu", "self",
             "glu does not support scalars because halving size must be even");
  dim = wrap_dim(dim, self.dim(), "glu");
  const int64_t n = self.size(dim);
  KILN_CHECK(n % 2 == 0, ShapeError, "glu", "self", "Halving dimension must be even, but dimension ", dim, " is size ",
             n);
  // an empty input: the first half (at offset 0) is the empty result; a view at a nonzero offset
  // into an empty tensor's null storage is never made
  if (self.numel() == 0) return kiln::narrow(self, dim, 0, n / 2).clone();
  return kiln::narrow(self, dim, 0, n / 2) * kiln::sigmoid(kiln::narrow(self, dim, n / 2, n / 2));
}

// weight holds one slope, or one per channel (dim 1; a 1-d input has one channel).
Tensor prelu(const Tensor& self, const Tensor& weight) {
  KILN_CHECK(weight.dim() <= 1, ShapeError, "prelu", "weight",
             "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = ", weight.dim());
  const int64_t channels = self.dim() >= 2 ? self.size(1) : 1;
  KILN_CHECK(weight.numel() == 1 || weight.numel() == channels, ShapeError, "prelu", "weight",
             "Mismatch of parameter numbers and input channel size. Found parameter numbers = ", weight.numel(),
             " and channel size = ", channels, ".");
  Tensor slope = weight;
  if (weight.numel() > 1 || self.dim() < weight.dim()) {
    DimVector shape(std::max<int64_t>(self.dim() - 1, weight.dim()), 1);
    if (weight.numel() > 1) shape[0] = channels;
    slope = kiln::reshape(weight, shape);
  }
  return kiln::where(kiln::gt(self, wrapped_scalar(0)), self, slope * self);
}

// Training draws each negative element's slope from U(lower, upper) (kiln's Philox generator);
// evaluation uses their mean, as PyTorch's rrelu.
Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  const double lo = lower.to_double(), hi = upper.to_double();
  KILN_CHECK(lo <= hi, ValueError, "rrelu", "lower", "Lower bound should be less than or equal to the upper bound");
  if (!training) return kiln::leaky_relu(self, (lo + hi) / 2);
  Tensor slopes;
  {
    NoGradGuard no_grad;
    slopes = kiln::empty_like(self);
    kiln::uniform_(slopes, lo, hi, generator);
    slopes = kiln::where(kiln::gt(self, wrapped_scalar(0)), kiln::ones_like(self), slopes);
  }
  return self * slopes;
}

}  // namespace kiln::composite
