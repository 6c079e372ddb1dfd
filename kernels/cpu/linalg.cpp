// mm, addmm and bmm on CPU: gemm (gemm.cpp) into the result the meta step (kiln/meta/matmul.h)
// sized and checked.
#include "kiln/gen/kernels/cpu/addmm.h"
#include "kiln/gen/kernels/cpu/bmm.h"
#include "kiln/gen/kernels/cpu/mm.h"
#include "gemm.h"

namespace kiln::cpu {
namespace {

// out[n x m] (contiguous) = alpha * mat1 @ mat2 + beta * out.
void matmul_into(const TensorBase& mat1, const TensorBase& mat2, const TensorBase& out, const Scalar& alpha,
                 const Scalar& beta) {
  const int64_t n = mat1.size(0), k = mat1.size(1), m = mat2.size(1);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      KILN_FAIL(DTypeError, "mm", "self", "matrix products of bool tensors are not supported");
    } else {
      MatRef<T> a{static_cast<const T*>(mat1.data_ptr()), mat1.stride(0), mat1.stride(1)};
      MatRef<T> b{static_cast<const T*>(mat2.data_ptr()), mat2.stride(0), mat2.stride(1)};
      gemm<T>(n, m, k, alpha, a, b, beta, static_cast<T*>(out.data_ptr()), m);
    }
  });
}

}  // namespace

void mm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat2) {
  matmul_into(self, mat2, out, Scalar(1), Scalar(0));
}

void addmm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat1,
           const TensorBase& mat2, const Scalar& beta, const Scalar& alpha) {
  if (!meta::is_zero(beta) && out.numel() > 0) out.copy_(self);  // copy_ broadcasts; beta == 0 ignores self
  matmul_into(mat1, mat2, out, alpha, beta);
}

void bmm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat2) {
  const int64_t bs = self.size(0), n = self.size(1), k = self.size(2), m = mat2.size(2);
  if (out.numel() == 0) return;
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      KILN_FAIL(DTypeError, "bmm", "self", "matrix products of bool tensors are not supported");
    } else {
      const T* a = static_cast<const T*>(self.data_ptr());
      const T* b = static_cast<const T*>(mat2.data_ptr());
      T* c = static_cast<T*>(out.data_ptr());
      const int64_t as0 = self.stride(0), as1 = self.stride(1), as2 = self.stride(2);
      const int64_t bs0 = mat2.stride(0), bs1 = mat2.stride(1), bs2 = mat2.stride(2);
      const Scalar one(1), zero(0);
      // cblas has no batched call: one gemm per entry. Entries too small for OpenBLAS to split
      // well run in parallel over the batch (each then single-threaded inside); large ones run in
      // sequence, each using every thread.
      const int64_t work = n * m * k;
      const bool parallel = bs > 1 && bs * work >= kSmallGemmWork &&
                            work < (gemm_uses_blas_v<T> ? kBatchParallelBlasWork : kSmallGemmWork);
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t i = 0; i < bs; ++i)
        gemm<T>(n, m, k, one, MatRef<T>{a + i * as0, as1, as2}, MatRef<T>{b + i * bs0, bs1, bs2}, zero,
                c + i * n * m, m);
    }
  });
}

}  // namespace kiln::cpu
