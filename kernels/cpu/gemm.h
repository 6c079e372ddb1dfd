#ifndef KILN_KERNELS_CPU_GEMM_H_
#define KILN_KERNELS_CPU_GEMM_H_
// One matrix product on raw strided memory, shared by mm, addmm and bmm.
#include <cstdint>
#include <type_traits>
#include "kiln/common/gemm_desc.h"
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
// float32/float64/complex64/complex128 call OpenBLAS, passing transposed layouts as CblasTrans
// (float32 shapes where oneDNN's sgemm is faster call that instead, onednn_gemm.h);
// float16/bfloat16 are widened to float32 for sgemm (accumulation in float32); integers use a
// blocked loop that wraps like PyTorch. Parallel inside (OpenBLAS's threads, or OpenMP for the
// loop) unless already in a parallel region.
template <typename T>
void gemm(int64_t n, int64_t m, int64_t k, const Scalar& alpha, MatRef<T> a, MatRef<T> b, const Scalar& beta,
          T* c, int64_t ldc);

// Whether gemm<T> ends in a BLAS call (OpenBLAS, or oneDNN's sgemm for some float32 shapes).
template <typename T>
inline constexpr bool gemm_uses_blas_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex<float>> ||
    std::is_same_v<T, complex<double>> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Work (n*m*k) below which a gemm is "small": bmm runs such loop-type products in parallel over the batch.
inline constexpr int64_t kSmallGemmWork = 64 * 64 * 64;
// BLAS products up to this work run one per thread in bmm: OpenBLAS's own split of a 128^3
// product over threads costs more in synchronization than it gains.
inline constexpr int64_t kBatchParallelBlasWork = 256 * 256 * 256;

// Executes a GemmDesc with OpenBLAS (float and double): the host twin of the cuBLAS call.
template <typename T>
void run_gemm_desc(const gemm::GemmDesc& d, T alpha, const T* a, const T* b, T beta, T* c);
template <>
void run_gemm_desc<float>(const gemm::GemmDesc&, float, const float*, const float*, float, float*);
template <>
void run_gemm_desc<double>(const gemm::GemmDesc&, double, const double*, const double*, double, double*);

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_GEMM_H_
