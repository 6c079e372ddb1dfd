// Inputs of structured kernels (see kiln/meta/inputs.h).
#include "kiln/meta/inputs.h"

namespace kiln::meta {

Tensor contiguous_input(const Tensor& t) {
  if (!t.defined() || t.is_contiguous()) return t;
  Tensor out = empty(t.sizes(), TensorOptions(t.dtype(), t.device()));
  out.copy_(t);
  return out;
}

}  // namespace kiln::meta
