#ifndef KILN_KERNELS_CPU_ONEDNN_GEMM_H_
#define KILN_KERNELS_CPU_ONEDNN_GEMM_H_
// float32 matrix products through oneDNN's sgemm, for the shapes where it beats Debian's
// OpenBLAS on this class of machine (AVX2): mid-sized and skinny products, the ones linear
// layers, RNN gates and attention projections make, where oneDNN runs near its peak and
// OpenBLAS does not, most of all at 2 threads (BENCHMARKS.md, "oneDNN's sgemm").
// Only built where CMake found oneDNN (KILN_HAVE_ONEDNN).
#include <cstdint>

namespace kiln::cpu::onednn {

// C[n x m] = alpha * op(A) @ op(B) + beta * C, row-major, as cblas_sgemm(CblasRowMajor, ...).
// Returns false, having written nothing, where the shape is one OpenBLAS runs as fast or
// faster (tiny, very large, or a few rows against many), or oneDNN is not built in.
bool sgemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace kiln::cpu::onednn
#endif  // KILN_KERNELS_CPU_ONEDNN_GEMM_H_
