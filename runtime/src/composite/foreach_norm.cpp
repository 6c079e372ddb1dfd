// _foreach_norm: one norm per tensor of a list (what clip_grad_norm_ joins into its total). A
// loop over norm: kiln's reduction reads each tensor once, which is what a fused list kernel
// would save launches on, not passes.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/norm.h"

namespace kiln::composite {

TensorList foreach_norm(const TensorList& self, const Scalar& ord) {
  TensorList out;
  out.reserve(self.size());
  for (const Tensor& t : self) out.push_back(kiln::norm(t, ord));
  return out;
}

}  // namespace kiln::composite
