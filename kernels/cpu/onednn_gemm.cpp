// oneDNN's sgemm for the float32 products where it is faster than OpenBLAS (onednn_gemm.h).
#include "onednn_gemm.h"
#include "onednn_enabled.h"

#ifdef KILN_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace kiln::cpu::onednn {
namespace {

// Where oneDNN wins, from a sweep of shapes at 1 and 2 threads (BENCHMARKS.md): below 32^3
// multiply-adds its fixed cost per call dominates (0.1 us vs 0.5 us at 2x3x4); from 512^3 up
// both libraries run at peak (0.93-1.04x); with 2 to 15 rows or columns against hundreds,
// OpenBLAS's narrow kernels are faster at 1 thread (8x1024x1024: 0.7x, 1000x10x100: 0.5x).
// Everything between, square, tall, wide or a matrix-vector product, runs 1.2x to 5x faster.
constexpr int64_t kMinWork = int64_t(32) * 32 * 32;
constexpr int64_t kMaxWork = int64_t(512) * 512 * 512;

bool onednn_wins(int64_t n, int64_t m, int64_t k) {
  const int64_t work = n * m * k;
  if (work < kMinWork || work >= kMaxWork) return false;
  const int64_t narrow = n < m ? n : m;
  return narrow == 1 || narrow >= 16;
}

}  // namespace

bool sgemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef KILN_HAVE_ONEDNN
  if (!enabled() || !onednn_wins(n, m, k)) return false;
  // dnnl_sgemm is row-major with cblas's argument order. It only fails on arguments cblas would
  // reject too; the caller then runs cblas on the untouched C.
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', n, m, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
         dnnl_success;
#else
  (void)trans_a, (void)trans_b, (void)n, (void)m, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb,
      (void)beta, (void)c, (void)ldc;
  return false;
#endif
}

}  // namespace kiln::cpu::onednn
