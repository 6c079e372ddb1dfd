#ifndef KILN_KERNELS_CUDA_GEMM_INTO_H_
#define KILN_KERNELS_CUDA_GEMM_INTO_H_
// One cuBLAS product on the current stream (kernels/cuda/blas.cu), for kernels built on products.
#include "kiln/scalar.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {

// out ([r, c] or [batch, r, c], each row dense) = alpha * x @ y + beta * out. x and y are views in
// any strides (a batch stride of 0 reuses one matrix); layouts cuBLAS cannot read are copied.
void gemm_into(const TensorBase& out, TensorBase x, TensorBase y, const Scalar& alpha, const Scalar& beta,
               const char* op);

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_GEMM_INTO_H_
