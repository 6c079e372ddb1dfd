// Inputs of structured kernels (see kiln/meta/inputs.h).
#include "kiln/meta/inputs.h"

namespace kiln::meta {

TensorBase input_as(const TensorBase& t, DType dtype, bool contiguous) {
  if (!t.defined() || (t.dtype() == dtype && (!contiguous || t.is_contiguous()))) return t;
  TensorBase out = detail::empty_dense(t.sizes(), dtype, t.device());
  out.copy_(t);
  return out;
}

}  // namespace kiln::meta
