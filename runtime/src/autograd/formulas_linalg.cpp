// Gradients of the matrix products (PyTorch's mm_mat1_backward / mm_mat2_backward).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/mm.h"

namespace kiln {

TensorBase scale_grad(const TensorBase& grad_in, const Scalar& s) {
  const Tensor grad(grad_in);
  if (!s.is_complex() && s.to<double>() == 1.0) return grad;
  return grad * s;
}

TensorBase mm_mat1_backward(const TensorBase& grad_in, const TensorBase& mat2_in, const Scalar& alpha) {
  const Tensor grad(grad_in);
  const Tensor mat2(mat2_in);
  return scale_grad(mm(grad, mat2.t()), alpha);
}

TensorBase mm_mat2_backward(const TensorBase& grad_in, const TensorBase& mat1_in, const TensorBase& mat2_in,
                            const Scalar& alpha) {
  const Tensor grad(grad_in);
  const Tensor mat1(mat1_in);
  const Tensor mat2(mat2_in);
  // A column-major mat2 (a transposed view) gets (grad^T @ mat1)^T: the same values, laid out
  // like mat2, so the transpose's own backward hands the base tensor a contiguous gradient.
  const bool column_major = mat2.dim() == 2 && mat2.size(0) > 1 && mat2.size(1) > 1 && mat2.stride(0) == 1;
  Tensor g = column_major ? mm(grad.t(), mat1).t() : mm(mat1.t(), grad);
  return scale_grad(g, alpha);
}

}  // namespace kiln
