// mm, addmm and bmm on CPU: argument checks with PyTorch's messages, then gemm (gemm.cpp).
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_utils.h"

namespace kiln::cpu {
namespace {

void check_matrix(const Tensor& t, const char* op, const char* arg, const char* name) {
  KILN_CHECK(t.dim() == 2, ShapeError, op, arg, name, " must be a matrix, got ", t.dim(), "-D tensor");
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* arg, const char* a_name,
                      const char* b_name) {
  KILN_CHECK(a.dtype() == b.dtype(), DTypeError, op, arg, "expected ", a_name, " and ", b_name,
             " to have the same dtype, but got: ", dtype_name(a.dtype()), " != ", dtype_name(b.dtype()));
}

void check_scalar_fits(const Scalar& s, DType d, const char* op, const char* arg) {
  KILN_CHECK(!s.is_complex() || is_complex(d), ValueError, op, arg, "complex ", arg, " ", s.str(),
             " cannot be converted to ", dtype_name(d));
}

// out[n x m] (contiguous) = alpha * mat1 @ mat2 + beta * out.
void matmul_into(const Tensor& mat1, const Tensor& mat2, Tensor& out, const Scalar& alpha, const Scalar& beta) {
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

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_matrix(self, "mm", "self", "self");
  check_matrix(mat2, "mm", "mat2", "mat2");
  check_same_dtype(self, mat2, "mm", "mat2", "mat1", "mat2");
  KILN_CHECK(self.size(1) == mat2.size(0), ShapeError, "mm", "mat2", "mat1 and mat2 shapes cannot be multiplied (",
             self.size(0), "x", self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  Tensor out = empty({self.size(0), mat2.size(1)}, TensorOptions(self.dtype()));
  matmul_into(self, mat2, out, Scalar(1), Scalar(0));
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  check_matrix(mat1, "addmm", "mat1", "mat1");
  check_matrix(mat2, "addmm", "mat2", "mat2");
  check_same_dtype(mat1, mat2, "addmm", "mat2", "mat1", "mat2");
  check_same_dtype(self, mat2, "addmm", "self", "self", "mat2");
  KILN_CHECK(mat1.size(1) == mat2.size(0), ShapeError, "addmm", "mat2", "mat1 and mat2 shapes cannot be multiplied (",
             mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  check_scalar_fits(alpha, self.dtype(), "addmm", "alpha");
  check_scalar_fits(beta, self.dtype(), "addmm", "beta");
  const int64_t n = mat1.size(0), m = mat2.size(1);
  // self broadcasts to [n, m] (PyTorch's expand rules and message).
  const int64_t target[2] = {n, m};
  KILN_CHECK(self.dim() <= 2, ShapeError, "addmm", "self", "the number of sizes provided (2) must be greater or equal ",
             "to the number of dimensions in the tensor (", self.dim(), ")");
  for (int64_t i = 0; i < self.dim(); ++i) {
    const int64_t d = 2 - self.dim() + i, have = self.size(i);
    KILN_CHECK(have == 1 || have == target[d], ShapeError, "addmm", "self", "The expanded size of the tensor (",
               target[d], ") must match the existing size (", have, ") at non-singleton dimension ", d,
               ".  Target sizes: [", n, ", ", m, "].  Tensor sizes: ", shape_str(self.sizes()));
  }
  Tensor out = empty({n, m}, TensorOptions(self.dtype()));
  const bool zero_beta = beta.to<complex<double>>() == complex<double>(0.0, 0.0);
  if (!zero_beta && out.numel() > 0) out.copy_(self);  // copy_ broadcasts; beta == 0 ignores self entirely
  matmul_into(mat1, mat2, out, alpha, beta);
  return out;
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  KILN_CHECK(self.dim() == 3, ShapeError, "bmm", "self", "batch1 must be a 3D tensor, got ", self.dim(), "-D");
  KILN_CHECK(mat2.dim() == 3, ShapeError, "bmm", "mat2", "batch2 must be a 3D tensor, got ", mat2.dim(), "-D");
  check_same_dtype(self, mat2, "bmm", "mat2", "batch1", "batch2");
  const int64_t bs = self.size(0), n = self.size(1), k = self.size(2), m = mat2.size(2);
  KILN_CHECK(mat2.size(0) == bs && mat2.size(1) == k, ShapeError, "bmm", "mat2",
             "Expected size for first two dimensions of batch2 tensor to be: [", bs, ", ", k, "] but got: [",
             mat2.size(0), ", ", mat2.size(1), "].");
  Tensor out = empty({bs, n, m}, TensorOptions(self.dtype()));
  if (out.numel() == 0) return out;
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
  return out;
}

}  // namespace kiln::cpu
