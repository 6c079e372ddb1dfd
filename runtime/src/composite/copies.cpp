// Ops that copy only when they must: contiguous, clone (always), to_dtype.
#include "kiln/gen/composite.h"
#include "kiln/gen/api/clone.h"
#include "kiln/gen/api/contiguous.h"

namespace kiln::composite {

namespace {
Tensor copy_as(const Tensor& self, DType dtype) {
  Tensor out = kiln::empty(self.sizes(), TensorOptions(dtype, self.device()));
  out.copy_(self);
  return out;
}
}  // namespace

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  return copy_as(self, self.dtype());
}

Tensor clone(const Tensor& self) { return copy_as(self, self.dtype()); }

Tensor to_dtype(const Tensor& self, DType dtype, bool non_blocking, bool copy) {
  if (dtype == self.dtype() && !copy) return self;
  return copy_as(self, dtype);
}

}  // namespace kiln::composite
