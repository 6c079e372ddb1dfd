// Complex numbers as views and compositions: view_as_real/view_as_complex reinterpret the same
// bytes (a complex element is its real and imaginary part side by side), and real, imag, polar
// and conj are built on them and on pointwise ops, so autograd flows through
// their parts. kiln has no lazy conjugate bit: conj materializes (conj_physical) and
// resolve_conj has nothing to resolve.
#include "kiln/gen/composite.h"

#include "kiln/gen/api/conj_physical.h"
#include "kiln/gen/api/cos.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/select.h"
#include "kiln/gen/api/sin.h"
#include "kiln/gen/api/stack.h"
#include "kiln/gen/api/view_as_complex.h"
#include "kiln/gen/api/view_as_real.h"
#include "kiln/pointwise.h"

namespace kiln::composite {

Tensor view_as_real(const Tensor& self) {
  KILN_CHECK(is_complex(self.dtype()), DTypeError, "view_as_real", "self",
             "view_as_real is only supported for complex tensors, got ", dtype_name(self.dtype()));
  DimVector sizes(self.sizes()), strides;
  for (int64_t s : self.strides()) strides.push_back(2 * s);
  sizes.push_back(2);
  strides.push_back(1);
  return self.as_strided_view(sizes, strides, 2 * self.storage_offset(), to_real(self.dtype()));
}

Tensor view_as_complex(const Tensor& self) {
  const char* op = "view_as_complex";
  KILN_CHECK(self.dtype() == DType::Float32 || self.dtype() == DType::Float64, DTypeError, op, "self",
             "view_as_complex is only supported for float and double tensors, got ", dtype_name(self.dtype()));
  KILN_CHECK(self.dim() > 0 && self.sizes().back() == 2, ShapeError, op, "self",
             "Tensor must have a last dimension of size 2, got shape ", self.shape_str());
  KILN_CHECK(self.strides().back() == 1, ShapeError, op, "self", "Tensor must have a last dimension with stride 1");
  DimVector sizes(self.sizes()), strides;
  sizes.pop_back();
  for (size_t d = 0; d + 1 < size_t(self.dim()); ++d) {
    KILN_CHECK(self.strides()[d] % 2 == 0, ShapeError, op, "self",
               "Tensor must have a stride divisible by 2 for all "
               "but last dimension, got strides ",
               shape_str(self.strides()));
    strides.push_back(self.strides()[d] / 2);
  }
  KILN_CHECK(self.storage_offset() % 2 == 0, ShapeError, op, "self",
             "Tensor must have a storage_offset divisible by 2, got ", self.storage_offset());
  return self.as_strided_view(sizes, strides, self.storage_offset() / 2, to_complex(self.dtype()));
}

Tensor real(const Tensor& self) {
  if (!is_complex(self.dtype())) return self;
  return kiln::select(kiln::view_as_real(self), -1, 0);
}

Tensor imag(const Tensor& self) {
  KILN_CHECK(is_complex(self.dtype()), DTypeError, "imag", "self",
             "imag is not implemented for tensors with non-complex dtypes, got ", dtype_name(self.dtype()));
  return kiln::select(kiln::view_as_real(self), -1, 1);
}

namespace {
// re + i im (broadcast): the pair side by side is the complex number's layout. (PyTorch's
// torch.complex; kiln has no op of that name, which would clash with the type kiln::complex<T>.)
Tensor complex_of(const Tensor& re, const Tensor& im, const char* op) {
  const DimVector shape = pointwise::broadcast_shapes(re.sizes(), im.sizes(), op, "angle");
  return kiln::view_as_complex(kiln::stack({kiln::expand(re, shape), kiln::expand(im, shape)}, -1));
}
}  // namespace

Tensor polar(const Tensor& abs, const Tensor& angle) {
  for (const Tensor* t : {&abs, &angle})
    KILN_CHECK(t->dtype() == DType::Float32 || t->dtype() == DType::Float64, DTypeError, "polar",
               t == &abs ? "abs" : "angle", "expected both inputs to be Float or Double tensors but got ",
               dtype_name(abs.dtype()), " and ", dtype_name(angle.dtype()));
  KILN_CHECK(abs.dtype() == angle.dtype(), DTypeError, "polar", "angle",
             "expected abs and angle to have the same "
             "dtype, but got abs.dtype = ",
             dtype_name(abs.dtype()), " and angle.dtype = ", dtype_name(angle.dtype()));
  KILN_CHECK(abs.device() == angle.device(), DeviceError, "polar", "angle",
             "expected abs and angle on one device, got ", abs.device().str(), " and ", angle.device().str());
  return complex_of(abs * kiln::cos(angle), abs * kiln::sin(angle), "polar");
}

Tensor conj(const Tensor& self) { return is_complex(self.dtype()) ? kiln::conj_physical(self) : self; }

Tensor resolve_conj(const Tensor& self) { return self; }

}  // namespace kiln::composite
