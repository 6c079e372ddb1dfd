#pragma once
// One matrix product on raw strided memory, shared by mm, addmm and bmm.
#include <cstdint>
#include "kiln/scalar.h"

namespace kiln::cpu {

// A matrix of element type T with element strides (rs between rows, cs between columns).
template <typename T>
struct MatRef {
  const T* data;
  int64_t rs, cs;
};

// C[n x m] (row-major, leading dimension ldc) = alpha * (A[n x k] @ B[k x m]) + beta * C.
// beta == 0 never reads C, so NaNs in it do not propagate (as BLAS and PyTorch).
// float32/float64/complex64/complex128 call OpenBLAS, passing transposed layouts as CblasTrans;
// integers and 16-bit floats use a blocked loop (integers wrap like PyTorch, 16-bit floats
// accumulate in float). Parallel inside unless already in a parallel region.
template <typename T>
void gemm(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
          T* c, int64_t ldc);

// Work (n*m*k) below which a gemm is "small": bmm runs such products in parallel over the batch.
inline constexpr int64_t kSmallGemmWork = 64 * 64 * 64;

}  // namespace kiln::cpu
