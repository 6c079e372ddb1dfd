// nonzero and masked_select: their result's length is a count of the input's values, so each
// counts first (one read to the host: a sync on CUDA, as PyTorch's) and then runs the internal
// kernel op that fills a result of that length (ops/indexing.yaml: _nonzero_sized,
// _masked_select_sized).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_masked_select_sized.h"
#include "kiln/gen/api/_nonzero_sized.h"
#include "kiln/gen/api/count_nonzero.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/unbind.h"
#include "kiln/meta/masking.h"
#include "kiln/pointwise.h"

namespace kiln::composite {

Tensor nonzero(const Tensor& self) {
  const int64_t count = kiln::count_nonzero(self).item<int64_t>();
  return kiln::_nonzero_sized(self, count);
}

TensorList nonzero_numpy(const Tensor& self) {
  // a 0-d tensor answers as one of a single element (PyTorch's as_tuple rule)
  const Tensor rows = kiln::nonzero(self.dim() == 0 ? self.reshape({1}) : self);
  return kiln::unbind(rows, 1);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  const char* op = "masked_select";
  meta::check_bool_mask(op, mask);
  const DimVector shape = pointwise::broadcast_shapes(self.sizes(), mask.sizes(), op, "mask");
  const Tensor s = self.sizes().equals(shape) ? self : kiln::expand(self, shape);
  const Tensor m = mask.sizes().equals(shape) ? mask : kiln::expand(mask, shape);
  return kiln::_masked_select_sized(s, m, kiln::count_nonzero(m).item<int64_t>());
}

}  // namespace kiln::composite
