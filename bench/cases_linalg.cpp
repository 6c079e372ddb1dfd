// Matrix products: libtorch ends in OpenBLAS, kiln in OpenBLAS or, for the mid-sized float32
// shapes it runs faster, oneDNN's sgemm (bmm's 128^3 entries); the machine section measures
// calling OpenBLAS directly, the ceiling these cases are compared with.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

Case matmul(int64_t n, kiln::DType dtype, const char* label, std::string ref) {
  double flops = 2.0 * double(n) * double(n) * double(n);
  return {std::string("matmul ") + label + " " + std::to_string(n), "linalg", 0, flops, std::move(ref), [n, dtype] {
    Twin a = twin_randn({n, n}, dtype), b = twin_randn({n, n}, dtype);
    return Prepared{[a, b] { kiln::Tensor r = kiln::matmul(a.k, b.k); },
                    [a, b] { at::Tensor r = at::matmul(a.t, b.t); }};
  }};
}

Case bmm() {
  double flops = 64 * 2.0 * 128 * 128 * 128;
  return {"bmm [64,128,128]", "linalg", 0, flops, "sgemm128x64", [] {
    Twin a = twin_randn({64, 128, 128}), b = twin_randn({64, 128, 128});
    return Prepared{[a, b] { kiln::Tensor r = kiln::bmm(a.k, b.k); }, [a, b] { at::Tensor r = at::bmm(a.t, b.t); }};
  }};
}

}  // namespace

std::vector<Case> linalg_cases() {
  return {matmul(512, kiln::DType::Float32, "float32", "sgemm512"),
          matmul(1024, kiln::DType::Float32, "float32", "sgemm1024"),
          matmul(2048, kiln::DType::Float32, "float32", "sgemm2048"),
          matmul(1024, kiln::DType::Float64, "float64", "dgemm1024"), bmm()};
}

}  // namespace kiln_bench
