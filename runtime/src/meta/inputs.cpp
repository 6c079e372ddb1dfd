// Inputs of structured kernels (see kiln/meta/inputs.h).
#include "kiln/meta/inputs.h"

namespace kiln::meta {

Tensor input_as(const Tensor& t, DType dtype, bool contiguous) {
  if (!t.defined() || (t.dtype() == dtype && (!contiguous || t.is_contiguous()))) return t;
  Tensor out = empty(t.sizes(), TensorOptions(dtype, t.device()));
  out.copy_(t);
  return out;
}

}  // namespace kiln::meta
