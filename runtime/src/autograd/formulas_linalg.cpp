// Gradients of the matrix products (PyTorch's mm_mat1_backward / mm_mat2_backward).
#include "kiln/autograd/formulas.h"

namespace kiln {

Tensor scale_grad(const Tensor& grad, const Scalar& s) {
  if (!s.is_complex() && s.to<double>() == 1.0) return grad;
  return grad * s;
}

Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, const Scalar& alpha) {
  return scale_grad(mm(grad, mat2.t()), alpha);
}

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha) {
  // A column-major mat2 (a transposed view) gets (grad^T @ mat1)^T: the same values, laid out
  // like mat2, so the transpose's own backward hands the base tensor a contiguous gradient.
  const bool column_major = mat2.dim() == 2 && mat2.size(0) > 1 && mat2.size(1) > 1 && mat2.stride(0) == 1;
  Tensor g = column_major ? mm(grad.t(), mat1).t() : mm(mat1.t(), grad);
  return scale_grad(g, alpha);
}

}  // namespace kiln
