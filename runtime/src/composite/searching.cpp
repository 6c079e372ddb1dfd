// The composites of ops/searching.yaml: the Scalar forms of searchsorted and bucketize (the
// number as a 0-d tensor of the dtype it promotes the sequence to, as PyTorch's wrapped number)
// and bincount, whose length depends on the values: it reads the extremes to the host once,
// checks them with PyTorch 1.13's messages and hands the length to the structured _bincount.
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_bincount.h"
#include "kiln/gen/api/bucketize.h"
#include "kiln/gen/api/aminmax.h"
#include "kiln/gen/api/searchsorted.h"
#include "kiln/gen/api/stack.h"
#include "kiln/pointwise.h"

namespace kiln::composite {
namespace {

// `value` as the 0-d tensor a Python number becomes beside `like`: of the promoted dtype, on
// like's device.
Tensor number_beside(const Tensor& like, const Scalar& value) {
  const TensorBase* inputs[] = {&like};
  const Scalar* scalars[] = {&value};
  const DType dtype = pointwise::result_type(inputs, 1, scalars, 1);
  return kiln::full({}, value, TensorOptions(dtype, like.device()));
}

}  // namespace

Tensor searchsorted_scalar(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                           std::optional<std::string_view> side, const Tensor& sorter) {
  return kiln::searchsorted(sorted_sequence, number_beside(sorted_sequence, self), out_int32, right, side, sorter);
}

Tensor bucketize_scalar(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return kiln::bucketize(number_beside(boundaries, self), boundaries, out_int32, right);
}

Tensor bincount(const Tensor& self, const Tensor& weights, int64_t minlength) {
  KILN_CHECK(minlength >= 0, ValueError, "bincount", "minlength", "minlength should be >= 0");
  // PyTorch 1.13 answers an empty input with int64 zeros, weights or not.
  if (self.dim() == 1 && self.numel() == 0) return kiln::zeros({minlength}, TensorOptions(DType::Int64, self.device()));
  KILN_CHECK(self.dim() == 1, ValueError, "bincount", "self",
             "bincount only supports 1-d non-negative integral inputs.");
  const auto [lo_t, hi_t] = kiln::aminmax(self);  // one pass over the values for both extremes
  const std::vector<int64_t> lohi = kiln::stack({lo_t, hi_t}).to_vector<int64_t>();  // and one read to the host
  const int64_t lo = lohi[0], hi = lohi[1];
  KILN_CHECK(lo >= 0, ValueError, "bincount", "self", "bincount only supports 1-d non-negative integral inputs.");
  KILN_CHECK(!weights.defined() || (weights.dim() == 1 && weights.size(0) == self.size(0)), ShapeError, "bincount",
             "weights", "weights should be 1-d and have the same length as input");
  const int64_t length = std::max(minlength, hi + 1);
  // Float weights sum in float32, any other dtype in float64 (PyTorch's rule).
  const Tensor w = !weights.defined() || weights.dtype() == DType::Float32 || weights.dtype() == DType::Float64
                       ? weights
                       : weights.to(DType::Float64);
  return kiln::_bincount(self, length, w);
}

}  // namespace kiln::composite
