#include "machine.h"

#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <memory>
#include <vector>

namespace kiln_bench {
namespace {

constexpr int64_t kStreamN = int64_t(1) << 24;

double stream_add_gbs(const HarnessOptions& opt) {
  // first touch in parallel, as the timed loop, so pages sit near the threads using them
  std::unique_ptr<float[]> a(new float[kStreamN]), b(new float[kStreamN]), c(new float[kStreamN]);
  float *pa = a.get(), *pb = b.get(), *pc = c.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < kStreamN; ++i) pa[i] = 1.0f, pb[i] = 2.0f, pc[i] = 0.0f;
  double s = time_best([=] {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < kStreamN; ++i) pc[i] = pa[i] + pb[i];
  }, opt);
  return 12.0 * double(kStreamN) / s / 1e9;
}

template <typename T>
double gemm_gflops(int n, int batch, const HarnessOptions& opt) {
  std::vector<T> a(size_t(n) * n * batch, T(0.5)), b(a.size(), T(0.25)), c(a.size());
  double s = time_best([&] {
    for (int i = 0; i < batch; ++i) {
      size_t off = size_t(i) * n * n;
      if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data() + off, n, b.data() + off, n,
                    0.0f, c.data() + off, n);
      else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data() + off, n, b.data() + off, n,
                    0.0, c.data() + off, n);
    }
  }, opt);
  return 2.0 * n * double(n) * n * batch / s / 1e9;
}

}  // namespace

MachineRates measure_machine(const HarnessOptions& opt) {
  MachineRates r;
  r.stream_add_gbs = stream_add_gbs(opt);
  r.gflops["sgemm512"] = gemm_gflops<float>(512, 1, opt);
  r.gflops["sgemm1024"] = gemm_gflops<float>(1024, 1, opt);
  r.gflops["sgemm2048"] = gemm_gflops<float>(2048, 1, opt);
  r.gflops["dgemm1024"] = gemm_gflops<double>(1024, 1, opt);
  r.gflops["sgemm128x64"] = gemm_gflops<float>(128, 64, opt);
  return r;
}

std::string library_of(const char* symbol) {
  void* p = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!p || !dladdr(p, &info) || !info.dli_fname) return "(not found)";
  return info.dli_fname;
}

}  // namespace kiln_bench
