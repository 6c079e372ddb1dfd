// clamp with Tensor bounds: min(max(self, min), max) over kiln's maximum/minimum, which promote
// and broadcast the three operands as PyTorch does and propagate NaN from any of them.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/maximum.h"
#include "kiln/gen/api/minimum.h"

namespace kiln::composite {

Tensor clamp_tensor(const Tensor& self, const Tensor& min, const Tensor& max) {
  KILN_CHECK(min.defined() || max.defined(), ValueError, "clamp", "min",
             "torch.clamp: At least one of 'min' or 'max' must not be None");
  KILN_CHECK(!is_complex(self.dtype()), DTypeError, "clamp", "self", "clamp is not supported for complex types");
  // PyTorch's clamp_min and clamp_max take bool, its two-sided kernel does not
  KILN_CHECK(!(min.defined() && max.defined() && pointwise::result_type({&self, &min, &max}) == DType::Bool),
             DTypeError, "clamp", "self", "\"clamp_cpu\" not implemented for 'Bool'");
  Tensor out = self;
  if (min.defined()) out = kiln::maximum(out, min);
  if (max.defined()) out = kiln::minimum(out, max);
  return out;
}

}  // namespace kiln::composite
