// Gradients of the matrix products (PyTorch's mm_mat1_backward and mm_mat2_backward in one).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/mm.h"

namespace kiln {

TensorBase scale_grad(const TensorBase& grad_in, const Scalar& s) {
  const Tensor grad(grad_in);
  if (!s.is_complex() && s.to<double>() == 1.0) return grad;
  return grad * scalar_conj(s);
}

Scalar scalar_conj(const Scalar& s) {
  if (!s.is_complex()) return s;
  const complex<double> z = s.to<complex<double>>();
  return Scalar(complex<double>(z.re, -z.im));
}

std::tuple<TensorBase, TensorBase> mm_backward(const TensorBase& grad_in, const TensorBase& mat1_in,
                                               const TensorBase& mat2_in, const Scalar& alpha,
                                               std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor mat1(mat1_in);
  const Tensor mat2(mat2_in);
  Tensor grad_mat1, grad_mat2;
  // the gradients of a product are products with the other factor's conjugate transpose
  if (mask[0]) grad_mat1 = scale_grad(mm(grad, conj(mat2).t()), alpha);
  if (mask[1]) {
    // A column-major mat2 (a transposed view) gets (grad^T @ mat1)^T: the same values, laid out
    // like mat2, so the transpose's own backward hands the base tensor a contiguous gradient.
    const bool column_major = mat2.dim() == 2 && mat2.size(0) > 1 && mat2.size(1) > 1 && mat2.stride(0) == 1;
    const Tensor mat1_conj = conj(mat1);
    grad_mat2 = scale_grad(column_major ? mm(grad.t(), mat1_conj).t() : mm(mat1_conj.t(), grad), alpha);
  }
  return {grad_mat1, grad_mat2};
}

}  // namespace kiln
