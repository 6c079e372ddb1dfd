// GEMM descriptions (kiln/common/gemm_desc.h): planned from kiln operands field by field as
// derived by hand, then executed by OpenBLAS exactly as cuBLAS would execute them on the device,
// and compared with products computed element by element.
#include <doctest/doctest.h>

#include <vector>
#include "kiln/common/gemm_desc.h"
#include "kernels/cpu/gemm.h"
#include "kiln/core.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/mm.h"

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

TEST_CASE("gemm plan: a broadcast x batch has batch stride 0 on BLAS's B") {
  Tensor x = iota({2, 3}).unsqueeze(0).expand({4, 2, 3});  // batch stride 0
  Tensor y = iota({4, 3, 5});
  gemm::GemmDesc d;
  Tensor out = run(x, y, &d);
  CHECK(d.batch == 4);
  CHECK(d.stride_b == 0);
  CHECK(d.stride_a == 15);
  CHECK(d.stride_c == 10);
  CHECK(d.m == 5);
  CHECK(d.n == 2);
  CHECK(d.k == 3);
  CHECK(out.to_vector<double>() == bmm(x.contiguous(), y).to_vector<double>());
}

TEST_CASE("gemm plan: batches that overlap in memory are read in place") {
  // x[b] is rows b and b + 1 of one 4 x 3 buffer: batch stride 3 < the 6 elements of a matrix
  std::vector<double> xs(12), ys{1, 0, 2, 0, 1, 0, 3, 1, 1};  // y: 3 x 3, shared (stride 0)
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = double(i);
  gemm::MatrixView xv{2, 3, 3, 1, 3}, yv{3, 3, 3, 1, 0}, ov{2, 3, 3, 1, 6};
  gemm::GemmPlan plan = gemm::plan_gemm(3, xv, yv, ov);
  CHECK_FALSE(plan.copy_x);
  CHECK_FALSE(plan.copy_y);
  CHECK(plan.desc.stride_b == 3);
  CHECK(plan.desc.stride_a == 0);
  std::vector<double> out(18, -1.0);
  cpu::run_gemm_desc<double>(plan.desc, 1.0, ys.data(), xs.data(), 0.0, out.data());
  std::vector<double> want;
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int p = 0; p < 3; ++p) s += xs[size_t(3 * b + 3 * i + p)] * ys[size_t(3 * p + j)];
        want.push_back(s);
      }
  CHECK(out == want);
}

TEST_CASE("gemm plan: a row-broadcast operand (stride 0, ld below the extent) asks for a copy") {
  Tensor x = iota({2, 3});
  Tensor y = iota({1, 4}).expand({3, 4});  // strides (0, 1): BLAS needs ld >= 4
  Tensor out = zeros({2, 4}, TensorOptions(kFloat64));
  gemm::GemmPlan plan = gemm::plan_gemm(1, view_of(x), view_of(y), view_of(out));
  CHECK(plan.copy_y);
  CHECK_FALSE(plan.copy_x);
  // planned again after the copy the caller makes, the product is the CPU's
  gemm::GemmDesc d;
  Tensor got = run(x, y.contiguous(), &d);
  CHECK(d.lda == 4);
  CHECK(got.to_vector<double>() == mm(x, y).to_vector<double>());
}

TEST_CASE("gemm plan: float32 through sgemm with alpha and beta accumulates into C") {
  Tensor x = arange(6, TensorOptions(kFloat32)).reshape({3, 2}).t();  // [2, 3] transposed
  Tensor y = arange(12, TensorOptions(kFloat32)).reshape({3, 4});
  Tensor c = ones({2, 4}, TensorOptions(kFloat32));
  gemm::GemmPlan plan = gemm::plan_gemm(1, view_of(x), view_of(y), view_of(c));
  REQUIRE_FALSE(plan.copy_x);
  CHECK(plan.desc.transb == Trans::T);
  CHECK(plan.desc.ldb == 2);
  cpu::run_gemm_desc<float>(plan.desc, 2.0f, y.data<float>(), x.data<float>(), 3.0f, c.data<float>());
  // 2 * x @ y + 3, x = [[0, 2, 4], [1, 3, 5]]
  std::vector<float> want = (mm(x, y) * 2 + 3).to_vector<float>();
  CHECK(c.to_vector<float>() == want);
  CHECK(want[0] == 2 * (0 * 0 + 2 * 4 + 4 * 8) + 3);
}

TEST_CASE("gemm plan: k = 0 plans a valid description and sizes past int32 are flagged") {
  Tensor x = zeros({2, 0}, TensorOptions(kFloat64)), y = zeros({0, 3}, TensorOptions(kFloat64));
  Tensor out = zeros({2, 3}, TensorOptions(kFloat64));
  gemm::GemmPlan plan = gemm::plan_gemm(1, view_of(x), view_of(y), view_of(out));
  CHECK(plan.desc.k == 0);
  CHECK_FALSE(plan.copy_x);  // whatever strides an empty operand has
  CHECK_FALSE(plan.copy_y);
  CHECK(plan.desc.lda >= plan.desc.m);  // BLAS's ld >= rows holds even with no columns
  CHECK(plan.desc.ldc == 3);
  CHECK(gemm::fits_blas_int(plan.desc));
  gemm::GemmDesc big = plan.desc;
  big.k = int64_t(1) << 31;
  CHECK_FALSE(gemm::fits_blas_int(big));
  big = plan.desc;
  big.stride_a = int64_t(1) << 40;  // batch strides are 64-bit
  CHECK(gemm::fits_blas_int(big));
}
