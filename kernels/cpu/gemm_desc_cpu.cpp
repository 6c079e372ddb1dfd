// A GemmDesc (kiln/common/gemm_desc.h) executed by OpenBLAS: what cuBLAS is asked to do on the
// device, done on the host, so the host tests check every description the planner makes.
#include <cblas.h>
#include "kiln/common/gemm_desc.h"
#include "gemm.h"

namespace kiln::cpu {
namespace {
CBLAS_TRANSPOSE to_cblas(gemm::Trans t) { return t == gemm::Trans::N ? CblasNoTrans : CblasTrans; }
}  // namespace

template <>
void run_gemm_desc<float>(const gemm::GemmDesc& d, float alpha, const float* a, const float* b, float beta,
                          float* c) {
  for (int64_t i = 0; i < d.batch; ++i)
    cblas_sgemm(CblasColMajor, to_cblas(d.transa), to_cblas(d.transb), blasint(d.m), blasint(d.n), blasint(d.k),
                alpha, a + i * d.stride_a, blasint(d.lda), b + i * d.stride_b, blasint(d.ldb), beta,
                c + i * d.stride_c, blasint(d.ldc));
}

template <>
void run_gemm_desc<double>(const gemm::GemmDesc& d, double alpha, const double* a, const double* b, double beta,
                           double* c) {
  for (int64_t i = 0; i < d.batch; ++i)
    cblas_dgemm(CblasColMajor, to_cblas(d.transa), to_cblas(d.transb), blasint(d.m), blasint(d.n), blasint(d.k),
                alpha, a + i * d.stride_a, blasint(d.lda), b + i * d.stride_b, blasint(d.ldb), beta,
                c + i * d.stride_c, blasint(d.ldc));
}

}  // namespace kiln::cpu
