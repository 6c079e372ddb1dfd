// cuBLAS products on the device against the CPU (runs only where a CUDA device is present):
// mm, bmm, addmm, matmul and linear for float32, float64, float16 and bfloat16, over transposed,
// sliced, batched and broadcast-batch operands, k = 0 and empty products, TF32 and errors.
// The CPU reference is computed in float64 from the same (already rounded) inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/addmm.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/mm.h"

using namespace kiln;

namespace {

const Device kDev("cuda:0");

// Tolerances per dtype for sums of ~100 products of N(0, 1) values (16-bit outputs are rounded
// once from a float32 accumulator).
struct Tol {
  double rtol, atol;
};
Tol tol_of(DType d) {
  switch (d) {
    case DType::Float64: return {1e-12, 1e-12};
    case DType::Float32: return {1e-5, 1e-4};
    case DType::Float16: return {5e-3, 5e-2};
    default: return {2e-2, 2e-1};  // bfloat16: 8-bit mantissa
  }
}

bool close(const Tensor& got, const Tensor& want, Tol t) {
  if (!got.sizes().equals(want.sizes())) return false;
  std::vector<double> x = got.to_vector<double>(), y = want.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (std::isnan(y[i]) ? !std::isnan(x[i]) : !(std::fabs(x[i] - y[i]) <= t.atol + t.rtol * std::fabs(y[i])))
      return false;
  return true;
}

// A random tensor already rounded to `d`, and its float64 twin for the reference.
Tensor rnd(IntArrayRef shape, DType d) { return randn(shape).to(d); }
Tensor f64(const Tensor& t) { return t.to(kFloat64); }

const DType kDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16};

}  // namespace

TEST_CASE("cuda linalg: mm over dtypes and layouts equals the CPU in float64") {
  manual_seed(11);
  for (DType d : kDTypes) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const Tol t = tol_of(d);
    Tensor a = rnd({37, 64}, d), b = rnd({64, 29}, d);
    Tensor da = a.to(kDev), db = b.to(kDev);
    Tensor got = mm(da, db);
    CHECK(got.dtype() == d);
    CHECK(got.device() == kDev);
    CHECK(close(got.cpu(), mm(f64(a), f64(b)), t));
    CHECK(close(mm(db.t(), da.t()).cpu(), mm(f64(b).t(), f64(a).t()), t));  // both transposed
    CHECK(close(mm(da, db.t().contiguous().t()).cpu(), mm(f64(a), f64(b)), t));  // column-major mat2
    CHECK(close(mm(da.slice(1, 3, 40), db.slice(0, 3, 40)).cpu(), mm(f64(a).slice(1, 3, 40), f64(b).slice(0, 3, 40)),
                t));  // ld > extent
    CHECK(close(mm(da.slice(1, 0, 64, 2), db.slice(0, 0, 64, 2)).cpu(),  // no unit stride: copied
                mm(f64(a).slice(1, 0, 64, 2), f64(b).slice(0, 0, 64, 2)), t));
    Tensor row = da.slice(0, 5, 6), col = db.slice(1, 7, 8);  // 1 x k and k x 1
    CHECK(close(mm(row, col).cpu(), mm(f64(a).slice(0, 5, 6), f64(b).slice(1, 7, 8)), t));
  }
}

TEST_CASE("cuda linalg: bmm with batched, per-batch transposed and broadcast batches") {
  manual_seed(12);
  for (DType d : kDTypes) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const Tol t = tol_of(d);
    Tensor x = rnd({5, 9, 48}, d), y = rnd({5, 48, 13}, d);
    Tensor dx = x.to(kDev), dy = y.to(kDev);
    Tensor want = bmm(f64(x), f64(y));
    CHECK(close(bmm(dx, dy).cpu(), want, t));
    CHECK(close(bmm(dx, dy.transpose(1, 2).contiguous().transpose(1, 2)).cpu(), want, t));
    CHECK(close(bmm(dx.transpose(1, 2).contiguous().transpose(1, 2), dy).cpu(), want, t));
    Tensor shared = rnd({48, 13}, d);  // one matrix for every batch: batch stride 0, no copy
    Tensor wide = shared.to(kDev).unsqueeze(0).expand({5, 48, 13});
    CHECK(close(bmm(dx, wide).cpu(), bmm(f64(x), f64(shared).unsqueeze(0).expand({5, 48, 13})), t));
    CHECK(close(bmm(dx.slice(0, 1, 4), dy.slice(0, 1, 4)).cpu(), bmm(f64(x).slice(0, 1, 4), f64(y).slice(0, 1, 4)), t));
  }
}

TEST_CASE("cuda linalg: addmm broadcasts self, scales by alpha and beta, and beta 0 ignores NaN") {
  manual_seed(13);
  for (DType d : kDTypes) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const Tol t = tol_of(d);
    Tensor a = rnd({17, 40}, d), b = rnd({40, 11}, d);
    Tensor bias = rnd({11}, d), full = rnd({17, 11}, d), column = rnd({17, 1}, d);
    for (const Tensor& self : {bias, full, column}) {
      CHECK(close(addmm(self.to(kDev), a.to(kDev), b.to(kDev)).cpu(), addmm(f64(self), f64(a), f64(b)), t));
      CHECK(close(addmm(self.to(kDev), a.to(kDev), b.to(kDev), 0.5, -2.0).cpu(),
                  addmm(f64(self), f64(a), f64(b), 0.5, -2.0), t));
    }
    Tensor nan = full_like(full, std::numeric_limits<double>::quiet_NaN());
    Tensor got = addmm(nan.to(kDev), a.to(kDev), b.to(kDev), 0.0, 1.0).cpu();
    CHECK(close(got, mm(f64(a), f64(b)), t));  // no NaN from self
  }
}

TEST_CASE("cuda linalg: matmul and linear compose over the cuBLAS kernels") {
  manual_seed(14);
  for (DType d : kDTypes) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const Tol t = tol_of(d);
    Tensor m3 = rnd({4, 6, 32}, d), m2 = rnd({32, 5}, d), v = rnd({32}, d), w = rnd({6}, d);
    CHECK(close(matmul(m3.to(kDev), m2.to(kDev)).cpu(), matmul(f64(m3), f64(m2)), t));  // batched @ matrix
    CHECK(close(matmul(m3.to(kDev), v.to(kDev)).cpu(), matmul(f64(m3), f64(v)), t));    // batched @ vector
    CHECK(close(matmul(w.to(kDev), m3.to(kDev)).cpu(), matmul(f64(w), f64(m3)), t));    // vector @ batched
    CHECK(close(matmul(v.to(kDev), v.to(kDev)).cpu(), matmul(f64(v), f64(v)), t));      // dot
    Tensor b4 = rnd({3, 1, 32, 7}, d), a4 = rnd({2, 6, 32}, d);                          // broadcast batches
    CHECK(close(matmul(a4.to(kDev), b4.to(kDev)).cpu(), matmul(f64(a4), f64(b4)), t));
    Tensor x = rnd({8, 32}, d), weight = rnd({10, 32}, d), bias = rnd({10}, d);
    CHECK(close(linear(x.to(kDev), weight.to(kDev), bias.to(kDev)).cpu(), linear(f64(x), f64(weight), f64(bias)), t));
    CHECK(close(linear(x.to(kDev), weight.to(kDev)).cpu(), linear(f64(x), f64(weight)), t));
    CHECK(close(linear(m3.to(kDev), weight.to(kDev)).cpu(), linear(f64(m3), f64(weight)), t));  // 3-d input
  }
}

TEST_CASE("cuda linalg: k = 0 gives zeros or beta * self, and empty products keep their shapes") {
  Tensor a = empty({3, 0}, TensorOptions(kFloat32, kDev)), b = empty({0, 4}, TensorOptions(kFloat32, kDev));
  Tensor z = mm(a, b);
  CHECK(z.sizes().equals({3, 4}));
  CHECK(z.cpu().to_vector<float>() == std::vector<float>(12, 0.0f));
  Tensor self = arange(4, TensorOptions(kFloat32));
  CHECK(close(addmm(self.to(kDev), a, b, 2.0).cpu(), (self * 2).expand({3, 4}).contiguous(), {0, 0}));
  CHECK(close(addmm(self.to(kDev), a, b, 1.0).cpu(), self.expand({3, 4}).contiguous(), {0, 0}));
  Tensor e = mm(empty({0, 5}, TensorOptions(kFloat64, kDev)), empty({5, 3}, TensorOptions(kFloat64, kDev)));
  CHECK(e.sizes().equals({0, 3}));
  Tensor eb = bmm(empty({0, 2, 5}, TensorOptions(kFloat16, kDev)), empty({0, 5, 3}, TensorOptions(kFloat16, kDev)));
  CHECK(eb.sizes().equals({0, 2, 3}));
  Tensor kb = bmm(empty({2, 2, 0}, TensorOptions(kFloat64, kDev)), empty({2, 0, 3}, TensorOptions(kFloat64, kDev)));
  CHECK(kb.cpu().to_vector<double>() == std::vector<double>(12, 0.0));
}

TEST_CASE("cuda linalg: TF32 is off by default, opt-in, and rounds float32 inputs to 10-bit mantissas") {
  manual_seed(15);
  Tensor a = randn({128, 512}), b = randn({512, 64});
  Tensor want = mm(f64(a), f64(b));
  REQUIRE_FALSE(cuda::allow_tf32());
  Tensor exact = mm(a.to(kDev), b.to(kDev)).cpu();
  CHECK(close(exact, want, {1e-5, 1e-3}));
  cuda::set_allow_tf32(true);
  CHECK(cuda::allow_tf32());
  Tensor fast = mm(a.to(kDev), b.to(kDev)).cpu();
  cuda::set_allow_tf32(false);
  CHECK(close(fast, want, {1e-2, 2e-1}));
  Tensor d64 = mm(f64(a).to(kDev), f64(b).to(kDev)).cpu();  // float64 never uses TF32
  CHECK(close(d64, want, {1e-12, 1e-12}));
}

TEST_CASE("cuda linalg: unsupported dtypes and bad shapes raise errors naming the op") {
  Tensor i = ones({2, 2}, TensorOptions(kInt32, kDev));
  for (const char* op : {"mm", "bmm", "addmm"}) {
    const std::string name = op;
    CAPTURE(name);
    std::string msg;
    if (std::string(op) == "mm") msg = testing::error_text<Error>([&] { (void)mm(i, i); });
    if (std::string(op) == "bmm") msg = testing::error_text<Error>([&] { (void)bmm(i.unsqueeze(0), i.unsqueeze(0)); });
    if (std::string(op) == "addmm") msg = testing::error_text<Error>([&] { (void)addmm(i, i, i); });
    CHECK(testing::has(msg, op));
    CHECK(testing::has(msg, "int32"));
  }
  Tensor a = ones({2, 3}, TensorOptions(kFloat32, kDev)), b = ones({4, 2}, TensorOptions(kFloat32, kDev));
  CHECK(testing::has(testing::error_text<ShapeError>([&] { (void)mm(a, b); }), "cannot be multiplied"));
  CHECK(testing::has(testing::error_text<ShapeError>([&] { (void)bmm(a, b); }), "3D"));
}
