// GEMM descriptions (kernels/common/gemm_desc.h): planned from kiln operands field by field as
// derived by hand, then executed by OpenBLAS exactly as cuBLAS would execute them on the device,
// and compared with products computed element by element.
#include <doctest/doctest.h>

#include <vector>
#include "kernels/common/gemm_desc.h"
#include "kernels/cpu/gemm.h"
#include "kiln/kiln.h"

using namespace kiln;
using gemm::Trans;

namespace {

gemm::MatrixView view_of(const Tensor& t) {  // 2-d, or 3-d with a batch dim first
  const int64_t o = t.dim() - 2;
  return {t.size(o), t.size(o + 1), t.stride(o), t.stride(o + 1), t.dim() == 3 ? t.stride(0) : 0};
}

// out[b] = x[b] @ y[b] through the plan and OpenBLAS; x, y float64 views of any layout.
Tensor run(const Tensor& x, const Tensor& y, gemm::GemmDesc* seen = nullptr) {
  const bool batched = x.dim() == 3;
  const int64_t batch = batched ? x.size(0) : 1, r = x.size(x.dim() - 2), c = y.size(y.dim() - 1);
  Tensor out = batched ? zeros({batch, r, c}, TensorOptions(kFloat64)) : zeros({r, c}, TensorOptions(kFloat64));
  gemm::GemmPlan plan = gemm::plan_gemm(batch, view_of(x), view_of(y), view_of(out));
  REQUIRE_FALSE(plan.copy_x);
  REQUIRE_FALSE(plan.copy_y);
  if (seen) *seen = plan.desc;
  cpu::run_gemm_desc<double>(plan.desc, 1.0, y.data<double>(), x.data<double>(), 0.0, out.data<double>());
  return out;
}

// The product element by element, reading the operands through their own strides.
std::vector<double> naive(const Tensor& x, const Tensor& y) {
  const bool batched = x.dim() == 3;
  const int64_t batch = batched ? x.size(0) : 1, r = x.size(-2), k = x.size(-1), c = y.size(-1);
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          Tensor xe = batched ? x.select(0, b) : x, ye = batched ? y.select(0, b) : y;
          s += xe.select(0, i).select(0, p).item().to_double() * ye.select(0, p).select(0, j).item().to_double();
        }
        out.push_back(s);
      }
  return out;
}

Tensor iota(IntArrayRef shape) { return arange(numel_of(shape), TensorOptions(kFloat64)).reshape(shape); }

}  // namespace

TEST_CASE("gemm plan: dense row-major operands are the column-major product out^T = y^T x^T") {
  Tensor x = iota({2, 3}), y = iota({3, 4});
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.transa == Trans::N);
  CHECK(d.transb == Trans::N);
  CHECK(d.m == 4);
  CHECK(d.n == 2);
  CHECK(d.k == 3);
  CHECK(d.lda == 4);
  CHECK(d.ldb == 3);
  CHECK(d.ldc == 4);
  CHECK(d.batch == 1);
  // [[0,1,2],[3,4,5]] @ [[0..3],[4..7],[8..11]]
  CHECK(out.to_vector<double>() == std::vector<double>{20, 23, 26, 29, 56, 68, 80, 92});
}

TEST_CASE("gemm plan: transposed operands become BLAS transposes, without copies") {
  Tensor x0 = iota({3, 2}), y0 = iota({4, 3});
  Tensor x = x0.t(), y = y0.t();  // [2, 3] with strides (1, 2); [3, 4] with strides (1, 3)
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.transa == Trans::T);
  CHECK(d.lda == 3);
  CHECK(d.transb == Trans::T);
  CHECK(d.ldb == 2);
  CHECK(out.to_vector<double>() == naive(x, y));
  CHECK(out.to_vector<double>() == mm(x, y).to_vector<double>());
}

TEST_CASE("gemm plan: a column slice keeps its row stride as the leading dimension") {
  Tensor x = iota({2, 5}).slice(1, 1, 4);  // [2, 3], strides (5, 1)
  Tensor y = iota({3, 6}).slice(1, 0, 4);  // [3, 4], strides (6, 1)
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.ldb == 5);
  CHECK(d.lda == 6);
  CHECK(out.to_vector<double>() == naive(x, y));
}

TEST_CASE("gemm plan: operands with no unit stride ask for a copy, and a row vector needs none") {
  Tensor x = iota({2, 6}).slice(1, 0, 6, 2);  // strides (6, 2): no BLAS layout
  Tensor y = iota({3, 4});
  Tensor out = zeros({2, 4}, TensorOptions(kFloat64));
  gemm::GemmPlan plan = gemm::plan_gemm(1, view_of(x), view_of(y), view_of(out));
  CHECK(plan.copy_x);
  CHECK_FALSE(plan.copy_y);
  Tensor row = iota({7, 3}).slice(0, 2, 3);  // [1, 3], row stride 3 but only one row
  gemm::GemmDesc d;
  Tensor r = run(row, y, &d);
  CHECK(d.ldb == 3);
  CHECK(r.to_vector<double>() == naive(row, y));
}

TEST_CASE("gemm plan: batches stride through x and y, and a broadcast y has batch stride 0") {
  Tensor x = iota({3, 2, 3});
  Tensor y = iota({3, 4}).unsqueeze(0).expand({3, 3, 4});
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.batch == 3);
  CHECK(d.stride_b == 6);
  CHECK(d.stride_a == 0);
  CHECK(d.stride_c == 8);
  CHECK(out.to_vector<double>() == naive(x, y));
  Tensor yb = iota({3, 4, 3}).transpose(1, 2);  // per-batch transposed
  CHECK(run(x, yb).to_vector<double>() == bmm(x, yb).to_vector<double>());
}

TEST_CASE("gemm plan: k = 1 is an outer product") {
  Tensor x = iota({3, 1}), y = iota({1, 2}) + 1;
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.k == 1);
  CHECK(out.to_vector<double>() == std::vector<double>{0, 0, 1, 2, 2, 4});
}
