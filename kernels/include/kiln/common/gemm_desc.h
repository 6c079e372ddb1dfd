#ifndef KILN_KERNELS_COMMON_GEMM_DESC_H_
#define KILN_KERNELS_COMMON_GEMM_DESC_H_
// One (batched) matrix product described in BLAS's column-major terms, planned once from kiln's
// row-major strided operands without copying where the layout allows. The same description is
// executed by OpenBLAS on the host (kernels/cpu/gemm_desc_cpu.cpp, which the tests run) and by
// cuBLAS on the device (kernels/cuda/blas.cu).
//
// out[b] = x[b] @ y[b] (row-major, out dense) is, column-major, out^T = y^T @ x^T: BLAS's A is
// y^T (m = out cols), its B is x^T (n = out rows), k is shared.
#include <cstdint>
#include <optional>

namespace kiln::gemm {

enum class Trans : int8_t { N, T };

struct GemmDesc {
  Trans transa = Trans::N, transb = Trans::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries (0: shared)
};

// A kiln matrix operand: rows x cols with element strides (and the stride between batch entries).
struct MatrixView {
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0, batch_stride = 0;
};

// How BLAS can read a p x q column-major matrix P whose element (i, j) sits at i*si + j*sj:
// directly (N, ld = sj), as the transpose of what is stored (T, ld = si), or not at all.
struct BlasOperand {
  Trans trans;
  int64_t ld;
};
inline std::optional<BlasOperand> blas_operand(int64_t p, int64_t q, int64_t si, int64_t sj) {
  const int64_t pmin = p > 1 ? p : 1, qmin = q > 1 ? q : 1;
  if (p == 0 || q == 0) return BlasOperand{Trans::N, pmin};  // nothing is read: any ld >= rows
  // size-1 dims put no constraint on their stride
  if ((si == 1 || p == 1) && (q == 1 || sj >= pmin)) return BlasOperand{Trans::N, q == 1 ? pmin : sj};
  if ((sj == 1 || q == 1) && (p == 1 || si >= qmin)) return BlasOperand{Trans::T, p == 1 ? qmin : si};
  return std::nullopt;
}

struct GemmPlan {
  GemmDesc desc;
  bool copy_x = false, copy_y = false;  // the operand must be made contiguous, then planned again
};

// out[b] = x[b] @ y[b] for b < batch; x is r x k, y is k x c, out is dense r x c (ld = c).
// x and y are only read, so any batch strides do (0 for a broadcast batch, or batches that
// overlap); only their per-matrix layout can force a copy.
inline GemmPlan plan_gemm(int64_t batch, const MatrixView& x, const MatrixView& y, const MatrixView& out) {
  GemmPlan plan;
  GemmDesc& d = plan.desc;
  d.m = y.cols;
  d.n = x.rows;
  d.k = x.cols;
  d.batch = batch;
  // BLAS A = y^T (m x k): element (i, j) = y[j][i]
  std::optional<BlasOperand> a = blas_operand(d.m, d.k, y.col_stride, y.row_stride);
  // BLAS B = x^T (k x n): element (i, j) = x[j][i]
  std::optional<BlasOperand> b = blas_operand(d.k, d.n, x.col_stride, x.row_stride);
  plan.copy_y = !a;
  plan.copy_x = !b;
  if (a) d.transa = a->trans, d.lda = a->ld;
  if (b) d.transb = b->trans, d.ldb = b->ld;
  d.ldc = d.m > 1 ? d.m : 1;
  d.stride_a = y.batch_stride;
  d.stride_b = x.batch_stride;
  d.stride_c = out.batch_stride;
  return plan;
}

// BLAS (OpenBLAS's default blasint, cuBLAS's int) takes sizes, leading dimensions and the batch
// count as 32-bit ints; batch strides are 64-bit in cuBLAS and pointer arithmetic on the host.
inline bool fits_blas_int(const GemmDesc& d) {
  const int64_t most = 2147483647;
  for (int64_t v : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.batch})
    if (v > most) return false;
  return true;
}

}  // namespace kiln::gemm
#endif  // KILN_KERNELS_COMMON_GEMM_DESC_H_
