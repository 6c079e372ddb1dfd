// Products composed of mm, bmm, addmm and matmul (autograd records the parts): mv, dot,
// baddbmm, linear.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/addmm.h"
#include "kiln/gen/api/baddbmm.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/dot.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/mv.h"

namespace kiln::composite {

Tensor mv(const Tensor& self, const Tensor& vec) {
  KILN_CHECK(self.dim() == 2, ShapeError, "mv", "self", "expected a 2-D matrix, got ", self.dim(), "-D");
  KILN_CHECK(vec.dim() == 1, ShapeError, "mv", "vec", "expected a 1-D vector, got ", vec.dim(), "-D");
  return kiln::mm(self, vec.unsqueeze(1)).squeeze(1);
}

Tensor dot(const Tensor& self, const Tensor& tensor) {
  KILN_CHECK(self.dim() == 1, ShapeError, "dot", "self", "expected a 1-D tensor, got ", self.dim(), "-D");
  KILN_CHECK(tensor.dim() == 1, ShapeError, "dot", "tensor", "expected a 1-D tensor, got ", tensor.dim(), "-D");
  KILN_CHECK(self.size(0) == tensor.size(0), ShapeError, "dot", "tensor", "inconsistent sizes ", self.size(0), " and ",
             tensor.size(0));
  return kiln::mm(self.unsqueeze(0), tensor.unsqueeze(1)).reshape({});
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  // beta and alpha take the tensors' dtype (they do not promote; 0.5 is 0 for ints), as in ATen.
  Tensor product = kiln::bmm(batch1, batch2);
  if (alpha.to_double() != 1.0 || alpha.is_complex()) product = kiln::mul(product, kiln::scalar_tensor(alpha, product.options()));
  if (beta.to_double() == 0.0 && !beta.is_complex()) return kiln::add(product, zeros_like(self));  // ignores NaN in self
  const bool unit_beta = beta.to_double() == 1.0 && !beta.is_complex();
  return kiln::add(unit_beta ? self : kiln::mul(self, kiln::scalar_tensor(beta, self.options())), product);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() == 2 && bias.defined()) return kiln::addmm(bias, input, weight.t());
  Tensor out = kiln::matmul(input, weight.t());
  return bias.defined() ? kiln::add(out, bias) : out;
}

}  // namespace kiln::composite
