// gemm: OpenBLAS for float32/float64/complex (16-bit floats widened to float32), a blocked loop
// for integers; oneDNN's sgemm instead for the float32 shapes it runs faster (onednn_gemm.h).
#include "gemm.h"

#include <cblas.h>
#include <omp.h>
#include <algorithm>
#include <climits>
#include <type_traits>
#include <vector>
#include "kernel_utils.h"
#include "kiln/meta/matmul.h"
#include "onednn_gemm.h"

namespace kiln::cpu {
namespace {

// C = beta * C for the BLAS types (zero when beta == 0, never reading C).
template <typename T>
void scale_or_zero(int64_t n, int64_t m, const Scalar& beta, T* c, int64_t ldc) {
  static_assert(is_complex_v<T> || std::is_floating_point_v<T>, "BLAS types only");
  const bool zero = meta::is_zero(beta);
  for (int64_t i = 0; i < n; ++i) {
    T* row = c + i * ldc;
    if (zero) {
      std::fill(row, row + m, T(0));
    } else {
      const T b = beta.to<T>();
      for (int64_t j = 0; j < m; ++j) row[j] = b * row[j];
    }
  }
}

// ---- BLAS path ----

struct BlasOperand {
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;
  bool ok = false;
};

// How BLAS (row-major) can read a rows x cols matrix with strides (rs, cs) without a copy.
BlasOperand blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasOperand op;
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    op = {CblasNoTrans, rows == 1 ? std::max<int64_t>(1, cols) : rs, true};
  } else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    op = {CblasTrans, cols == 1 ? std::max<int64_t>(1, rows) : cs, true};  // a transposed row-major matrix
  }
  if (op.ok && op.ld > INT_MAX) op.ok = false;
  return op;
}

// The operand for BLAS: in place when its strides allow it, else a row-major copy in `buf`.
template <typename T>
const T* blas_operand(int64_t rows, int64_t cols, MatRef<T> x, std::vector<T>& buf, BlasOperand& op) {
  op = blas_layout(rows, cols, x.rs, x.cs);
  if (op.ok) return x.data;
  buf.resize(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) buf[size_t(i * cols + j)] = x.data[i * x.rs + j * x.cs];
  op = {CblasNoTrans, std::max<int64_t>(1, cols), true};
  return buf.data();
}

template <typename T>
void gemm_blas(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
               T* c, int64_t ldc) {
  std::vector<T> abuf, bbuf;
  BlasOperand oa, ob;
  const T* pa = blas_operand(n, k, a, abuf, oa);
  const T* pb = blas_operand(k, m, b, bbuf, ob);
  const bool zero_beta = meta::is_zero(beta);
  if (zero_beta) scale_or_zero(n, m, beta, c, ldc);  // BLAS must not see garbage (NaN * 0)
  const T al = alpha.to<T>(), be = zero_beta ? T(0) : beta.to<T>();
  const blasint N = blasint(n), M = blasint(m), K = blasint(k);
  const blasint lda = blasint(oa.ld), ldb = blasint(ob.ld), ldcc = blasint(ldc);
  if constexpr (std::is_same_v<T, float>) {
    if (onednn::sgemm(oa.trans == CblasTrans, ob.trans == CblasTrans, n, m, k, al, pa, oa.ld, pb, ob.ld, be, c, ldc))
      return;
    cblas_sgemm(CblasRowMajor, oa.trans, ob.trans, N, M, K, al, pa, lda, pb, ldb, be, c, ldcc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, oa.trans, ob.trans, N, M, K, al, pa, lda, pb, ldb, be, c, ldcc);
  } else if constexpr (std::is_same_v<T, complex<float>>) {
    cblas_cgemm(CblasRowMajor, oa.trans, ob.trans, N, M, K, &al, pa, lda, pb, ldb, &be, c, ldcc);
  } else {
    cblas_zgemm(CblasRowMajor, oa.trans, ob.trans, N, M, K, &al, pa, lda, pb, ldb, &be, c, ldcc);
  }
}

// 16-bit floats: widen to float32 and use sgemm, which accumulates in float32 exactly as a loop
// in opmath would, at BLAS speed.
template <typename T>
void gemm_widened(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
                  T* c, int64_t ldc) {
  std::vector<float> af(size_t(n * k)), bf(size_t(k * m)), cf(size_t(n * m));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) af[size_t(i * k + p)] = float(a.data[i * a.rs + p * a.cs]);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < m; ++j) bf[size_t(p * m + j)] = float(b.data[p * b.rs + j * b.cs]);
  const bool zero_beta = meta::is_zero(beta);
  if (!zero_beta)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) cf[size_t(i * m + j)] = float(c[i * ldc + j]);
  gemm_blas<float>(n, m, k, alpha, MatRef<float>{af.data(), k, 1}, MatRef<float>{bf.data(), m, 1}, beta, cf.data(), m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) c[i * ldc + j] = T(cf[size_t(i * m + j)]);
}

// ---- Fallback: blocked loop in the accumulation type ----

// Integers accumulate in unsigned types of at least their width: modular arithmetic gives
// PyTorch's wrapping results (the low bits are all that survive the final cast) without
// signed-overflow UB. Other types accumulate in opmath.
template <typename T>
using gemm_acc_t = std::conditional_t<std::is_integral_v<T>, std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>,
                                      opmath_t<T>>;

template <typename Acc>
Acc scalar_as(const Scalar& s) {
  if constexpr (std::is_unsigned_v<Acc>) return Acc(s.to<int64_t>());  // floats truncate, as PyTorch
  else return s.to<Acc>();
}

template <typename T>
void gemm_loop(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
               T* c, int64_t ldc) {
  using Acc = gemm_acc_t<T>;
  constexpr int64_t IB = 32, JB = 256, KB = 128;
  // B once, converted to Acc and row-major, so the inner loop is unit-stride and vectorizable.
  std::vector<Acc> bc(size_t(k * m));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < m; ++j) bc[size_t(p * m + j)] = convert<Acc>(b.data[p * b.rs + j * b.cs]);
  const Acc al = scalar_as<Acc>(alpha), be = scalar_as<Acc>(beta);
  const bool zero_beta = meta::is_zero(beta);
  const int64_t ni = (n + IB - 1) / IB, nj = (m + JB - 1) / JB;
  const bool parallel = n * m * k >= kSmallGemmWork && !omp_in_parallel();
#pragma omp parallel for schedule(static) collapse(2) if (parallel)
  for (int64_t ti = 0; ti < ni; ++ti) {
    for (int64_t tj = 0; tj < nj; ++tj) {
      const int64_t i0 = ti * IB, i1 = std::min(n, i0 + IB), j0 = tj * JB, j1 = std::min(m, j0 + JB);
      const int64_t w = j1 - j0;
      Acc acc[IB * JB];
      std::fill(acc, acc + (i1 - i0) * w, Acc(0));
      for (int64_t p0 = 0; p0 < k; p0 += KB) {
        const int64_t p1 = std::min(k, p0 + KB);
        for (int64_t i = i0; i < i1; ++i) {
          Acc* arow = acc + (i - i0) * w;
          for (int64_t p = p0; p < p1; ++p) {
            const Acc av = convert<Acc>(a.data[i * a.rs + p * a.cs]);
            const Acc* brow = bc.data() + p * m + j0;
#pragma omp simd
            for (int64_t j = 0; j < w; ++j) arow[j] += av * brow[j];
          }
        }
      }
      for (int64_t i = i0; i < i1; ++i) {
        const Acc* arow = acc + (i - i0) * w;
        T* crow = c + i * ldc + j0;
        for (int64_t j = 0; j < w; ++j) {
          Acc v = al * arow[j];
          if (!zero_beta) v += be * convert<Acc>(crow[j]);
          crow[j] = convert<T>(v);
        }
      }
    }
  }
}

}  // namespace

template <typename T>
void gemm(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
          T* c, int64_t ldc) {
  if (n == 0 || m == 0) return;
  if (k == 0) {  // empty sum: C = beta * C
    if constexpr (std::is_integral_v<T> || is_reduced_float_v<T>) {
      const auto be = scalar_as<gemm_acc_t<T>>(beta);
      const bool zero = meta::is_zero(beta);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
          c[i * ldc + j] = zero ? T(0) : convert<T>(be * convert<gemm_acc_t<T>>(c[i * ldc + j]));
    } else {
      scale_or_zero(n, m, beta, c, ldc);
    }
    return;
  }
  if constexpr (gemm_uses_blas_v<T>) {
    if (n <= INT_MAX && m <= INT_MAX && k <= INT_MAX && ldc <= INT_MAX) {
      if constexpr (is_reduced_float_v<T>) gemm_widened(n, m, k, alpha, a, b, beta, c, ldc);
      else gemm_blas(n, m, k, alpha, a, b, beta, c, ldc);
      return;
    }
  }
  gemm_loop(n, m, k, alpha, a, b, beta, c, ldc);
}

#define KILN_INSTANTIATE_GEMM(T) \
  template void gemm<T>(int64_t, int64_t, int64_t, const Scalar&, MatRef<T>, MatRef<T>, const Scalar&, T*, int64_t);
KILN_INSTANTIATE_GEMM(uint8_t)
KILN_INSTANTIATE_GEMM(int8_t)
KILN_INSTANTIATE_GEMM(int16_t)
KILN_INSTANTIATE_GEMM(int32_t)
KILN_INSTANTIATE_GEMM(int64_t)
KILN_INSTANTIATE_GEMM(Half)
KILN_INSTANTIATE_GEMM(BFloat16)
KILN_INSTANTIATE_GEMM(float)
KILN_INSTANTIATE_GEMM(double)
KILN_INSTANTIATE_GEMM(complex<float>)
KILN_INSTANTIATE_GEMM(complex<double>)
#undef KILN_INSTANTIATE_GEMM

}  // namespace kiln::cpu
