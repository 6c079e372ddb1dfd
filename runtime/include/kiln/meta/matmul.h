#ifndef KILN_RUNTIME_INCLUDE_KILN_META_MATMUL_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_MATMUL_H_
// The meta steps of the matrix products (`meta: mm`, `meta: addmm`, `meta: bmm`): PyTorch's
// argument checks and messages, and the result's shape and dtype. The kernels then compute:
//   void kiln::<backend>::mm(const meta::MatmulPlan& plan, const TensorBase& out, const TensorBase& self, const
//   TensorBase& mat2)
// and likewise addmm (self, mat1, mat2, beta, alpha) and bmm, with the operands in any layout
// (a transposed operand is read by BLAS as it is) and `out` contiguous.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct MatmulPlan {
  DimVector sizes;  // [n, m], or [batch, n, m] for bmm
  DType dtype = DType::Float32;
};

MatmulPlan mm(const char* op, const TensorBase& self, const TensorBase& mat2);
// self broadcasts to [mat1 rows, mat2 cols] (PyTorch's expand rules and message).
MatmulPlan addmm(const char* op, const TensorBase& self, const TensorBase& mat1, const TensorBase& mat2,
                 const Scalar& beta, const Scalar& alpha);
MatmulPlan bmm(const char* op, const TensorBase& self, const TensorBase& mat2);

// beta == 0 ignores the added term entirely (NaNs in it do not propagate), as BLAS and PyTorch.
bool is_zero(const Scalar& s);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_MATMUL_H_
