// mm, addmm and bmm (kernels/cpu/linalg.cpp, gemm.cpp): OpenBLAS types with transposed and
// strided operands, the fallback loop for integers and 16-bit floats, broadcasting of addmm's
// self, and PyTorch's error messages. Expected values computed with PyTorch 1.13 or by hand.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/addmm.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/stack.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

// A tensor of `shape` whose flat element i is f(i), built in T.
template <typename T>
Tensor make_tensor_of(std::vector<int64_t> shape, const std::function<T(int64_t)>& f) {
  std::vector<T> v(size_t(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(int64_t(i));
  return from_vector(v, shape);
}

void expect_complex(const Tensor& t, std::vector<complex<double>> expected, double tol = 1e-6) {
  std::vector<complex<double>> got = t.to_vector<complex<double>>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(got[i].re - expected[i].re) <= tol);
    CHECK(std::fabs(got[i].im - expected[i].im) <= tol);
  }
}

// A = arange(12).reshape(3, 4) - 5, B = arange(20).reshape(4, 5) * 0.5 - 3 (as in the torch reference).
Tensor mat_a(DType d = kFloat32) {
  return make_tensor_of<double>({3, 4}, [](int64_t i) { return double(i) - 5; }).to(d);
}
Tensor mat_b(DType d = kFloat32) {
  return make_tensor_of<double>({4, 5}, [](int64_t i) { return double(i) * 0.5 - 3; }).to(d);
}
const std::vector<double> kAB = {2, -5, -12, -19, -26, 14, 15, 16, 17, 18, 26, 35, 44, 53, 62};

// Reference product in int64 (wrapping) for integer checks.
std::vector<int64_t> naive_mm(const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t n, int64_t k,
                              int64_t m) {
  std::vector<int64_t> c(size_t(n * m), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < m; ++j) c[size_t(i * m + j)] += a[size_t(i * k + p)] * b[size_t(p * m + j)];
  return c;
}

}  // namespace

TEST_CASE("mm: float32/float64 through BLAS, including transposed and strided operands") {
  for (DType d : {kFloat32, kFloat64}) {
    Tensor c = mm(mat_a(d), mat_b(d));
    CHECK(c.dtype() == d);
    expect_values(c, {3, 5}, kAB);
  }
  Tensor a = mat_a(), b = mat_b();
  // transposed contiguous matrices go to BLAS as CblasTrans
  expect_values(mm(a.t(), a), {4, 4}, {35, 32, 29, 26, 32, 32, 32, 32, 29, 32, 35, 38, 26, 32, 38, 44});
  expect_values(mm(b, b.t()), {4, 4},
               {22.5, -2.5, -27.5, -52.5, -2.5, 3.75, 10, 16.25, -27.5, 10, 47.5, 85, -52.5, 16.25, 85, 153.75});
  expect_values(mm(a.t().contiguous().t(), b.t().contiguous().t()), {3, 5}, kAB);  // both transposed layouts
  // layouts BLAS cannot read (column step 2, expanded) are copied first
  Tensor wide = make_tensor_of<float>({3, 8}, [](int64_t i) { return float(i / 8 * 4 + (i % 8) / 2) - 5; });
  expect_values(mm(wide.slice(1, 0, 8, 2), b), {3, 5}, kAB);
  Tensor row = from_vector<float>({1, 2, 3, 4}, {1, 4}).expand({3, 4});
  expect_values(mm(row, b), {3, 5}, {20, 25, 30, 35, 40, 20, 25, 30, 35, 40, 20, 25, 30, 35, 40});
  // vectors as matrices (1 x k, k x 1) with odd strides
  expect_values(mm(a.select(0, 1).unsqueeze(0), b.select(1, 2).unsqueeze(1)), {1, 1}, {16});
}

// float32 products take oneDNN's sgemm or OpenBLAS by shape (kernels/cpu/onednn_gemm.h): tiny,
// huge and few-rows-against-many stay on OpenBLAS, the rest go to oneDNN. One shape from each
// side of every boundary, in all four layouts, with alpha, beta and a NaN-filled C under
// beta == 0. Entries are small integers, so every float32 sum is exact whatever order either
// library adds in, and the products equal an int64 triple loop exactly.
TEST_CASE("mm/addmm: float32 on both sides of the oneDNN/OpenBLAS shape rule, every layout, exact") {
  struct Shape {
    int64_t n, k, m;
  };
  const Shape shapes[] = {{2, 4, 3},     {31, 33, 32},  {32, 32, 32},  {64, 64, 64},  {1, 1024, 64}, {1024, 64, 1},
                          {8, 64, 1024}, {15, 200, 64}, {16, 200, 64}, {64, 200, 15}, {1024, 64, 192}, {520, 520, 520}};
  for (const Shape& s : shapes) {
    std::vector<int64_t> av(size_t(s.n * s.k)), bv(size_t(s.k * s.m)), cv(size_t(s.n * s.m));
    for (int64_t i = 0; i < s.n * s.k; ++i) av[size_t(i)] = (i * 7 + 3) % 9 - 4;
    for (int64_t i = 0; i < s.k * s.m; ++i) bv[size_t(i)] = (i * 5 + 1) % 7 - 3;
    for (int64_t i = 0; i < s.n * s.m; ++i) cv[size_t(i)] = i % 5 - 2;
    const std::vector<int64_t> ab = naive_mm(av, bv, s.n, s.k, s.m);
    std::vector<float> plain(ab.begin(), ab.end()), fused(ab.size());
    for (size_t i = 0; i < ab.size(); ++i) fused[i] = float(2 * ab[i] - cv[i]);  // beta -1, alpha 2
    const Tensor a = from_vector(av, {s.n, s.k}).to(kFloat32), b = from_vector(bv, {s.k, s.m}).to(kFloat32);
    const Tensor c = from_vector(cv, {s.n, s.m}).to(kFloat32);
    const Tensor a_t = a.t().contiguous().t(), b_t = b.t().contiguous().t();  // column-major: CblasTrans
    struct Layout {
      Tensor x, y;
      const char* name;
    };
    for (const Layout& l : {Layout{a, b, "NN"}, Layout{a_t, b, "TN"}, Layout{a, b_t, "NT"}, Layout{a_t, b_t, "TT"}}) {
      INFO(s.n << "x" << s.k << " @ " << s.k << "x" << s.m << ", " << l.name);
      const Tensor &x = l.x, &y = l.y;
      CHECK(mm(x, y).to_vector<float>() == plain);
      CHECK(addmm(c, x, y, -1, 2).to_vector<float>() == fused);
      const Tensor nan_c = full({s.n, s.m}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(kFloat32));
      CHECK(addmm(nan_c, x, y, 0, 1).to_vector<float>() == plain);
    }
    // the same products batched: small entries run one per thread, inside a parallel region
    if (s.n * s.k * s.m <= 1024 * 64 * 192) {
      const Tensor batched = bmm(stack({a, a}), stack({b, b}));
      for (int64_t i = 0; i < 2; ++i) CHECK(batched.select(0, i).to_vector<float>() == plain);
    }
  }
}

TEST_CASE("mm: complex64/complex128 through BLAS") {
  std::vector<complex<double>> c = {{1, 2}, {3, -1}, {0, 0.5}, {2, 0}};
  std::vector<complex<double>> d = {{2, -1}, {1, 0}, {0, 1}, {-1, 1}};
  for (DType dt : {kComplex64, kComplex128}) {
    Tensor cm = from_vector(c, {2, 2}).to(dt), dm = from_vector(d, {2, 2}).to(dt);
    Tensor r = mm(cm, dm);
    CHECK(r.dtype() == dt);
    expect_complex(r, {{5, 6}, {-1, 6}, {0.5, 3}, {-2, 2.5}});
    expect_complex(mm(cm.t(), dm), {{3.5, 3}, {0.5, 1.5}, {5, -3}, {1, 1}});
  }
}

TEST_CASE("mm: integer and 16-bit float fallback") {
  for (DType d : {kInt64, kInt32, kInt16}) {
    Tensor b2 = make_tensor_of<double>({4, 5}, [](int64_t i) { return double(i) - 6; });  // 2 * B
    Tensor r = mm(mat_a(kFloat64).to(d), b2.to(d));
    CHECK(r.dtype() == d);
    expect_values(r, {3, 5}, {4, -10, -24, -38, -52, 28, 30, 32, 34, 36, 52, 70, 88, 106, 124});
  }
  // int8 wraps like PyTorch: 4 * 100 = 400 -> -112
  Tensor i8 = mm(full({3, 4}, 100, TensorOptions(kInt8)), ones({4, 5}, TensorOptions(kInt8)));
  CHECK(i8.dtype() == kInt8);
  CHECK(i8.to_vector<int64_t>() == std::vector<int64_t>(15, -112));
  Tensor u8 = mm(full({2, 3}, 2, TensorOptions(kUInt8)), full({3, 2}, 50, TensorOptions(kUInt8)));
  CHECK(u8.to_vector<int64_t>() == std::vector<int64_t>(4, 44));  // 300 mod 256
  for (DType d : {kFloat16, kBFloat16}) {
    Tensor r = mm(mat_a(d), mat_b(d));
    CHECK(r.dtype() == d);
    expect_values(r, {3, 5}, kAB, 1e-2);
    expect_values(mm(mat_a(d).t(), mat_a(d)), {4, 4}, {35, 32, 29, 26, 32, 32, 32, 32, 29, 32, 35, 38, 26, 32, 38, 44},
                 1e-2);
  }
  // large enough for several blocks and threads; compared with a plain triple loop
  const int64_t n = 70, k = 300, m = 260;
  std::vector<int64_t> av(size_t(n * k)), bv(size_t(k * m));
  for (int64_t i = 0; i < n * k; ++i) av[size_t(i)] = (i * 7 + 3) % 11 - 5;
  for (int64_t i = 0; i < k * m; ++i) bv[size_t(i)] = (i * 5 + 1) % 13 - 6;
  std::vector<int64_t> expected = naive_mm(av, bv, n, k, m);
  Tensor at = from_vector(av, {n, k}), bt = from_vector(bv, {k, m});
  CHECK(mm(at, bt).to_vector<int64_t>() == expected);
  CHECK(mm(at.t().contiguous().t(), bt).to_vector<int64_t>() == expected);
  // float16 of the same small integers is exact up to 2048 in magnitude; compare with float32 BLAS
  Tensor small_a = at.narrow(1, 0, 40), small_b = bt.narrow(0, 0, 40);
  std::vector<float> ref = mm(small_a.to(kFloat32), small_b.to(kFloat32)).to_vector<float>();
  CHECK(mm(small_a.to(kFloat16), small_b.to(kFloat16)).to_vector<float>() == ref);
}

TEST_CASE("mm: empty dims and errors") {
  expect_values(mm(zeros({3, 0}), zeros({0, 5})), {3, 5}, std::vector<double>(15, 0.0));
  expect_values(mm(zeros({0, 4}), zeros({4, 5})), {0, 5}, {});
  expect_values(mm(zeros({3, 0}, TensorOptions(kInt64)), zeros({0, 2}, TensorOptions(kInt64))), {3, 2}, {0, 0, 0, 0, 0, 0});
  CHECK(has(error_text<ShapeError>([] { mm(zeros({3, 4}), zeros({5, 6})); }),
            "mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)"));
  CHECK(has(error_text<ShapeError>([] { mm(zeros({3}), zeros({3, 6})); }), "self must be a matrix"));
  CHECK(has(error_text<ShapeError>([] { mm(zeros({3, 4}), zeros({4})); }), "mat2 must be a matrix"));
  CHECK(has(error_text<DTypeError>([] { mm(zeros({3, 4}), zeros({4, 5}, TensorOptions(kFloat64))); }),
            "expected mat1 and mat2 to have the same dtype"));
}

TEST_CASE("addmm: beta * self + alpha * mat1 @ mat2 with broadcasting") {
  Tensor a = mat_a(), b = mat_b();
  Tensor self_row = from_vector<float>({1, -1, 2, 0, 3}, {5});
  expect_values(addmm(self_row, a, b, 0.5, 2), {3, 5},
               {4.5, -10.5, -23, -38, -50.5, 28.5, 29.5, 33, 34, 37.5, 52.5, 69.5, 89, 106, 125.5});
  Tensor self_col = from_vector<float>({1, 2, 3}, {3, 1});
  expect_values(addmm(self_col, a, b), {3, 5}, {3, -4, -11, -18, -25, 16, 17, 18, 19, 20, 29, 38, 47, 56, 65});
  expect_values(addmm(scalar_tensor(1.0, TensorOptions(kFloat32)), a, b), {3, 5},
               {3, -4, -11, -18, -25, 15, 16, 17, 18, 19, 27, 36, 45, 54, 63});
  // full-size self, transposed mat1
  Tensor full_self = ones({4, 4});
  expect_values(addmm(full_self, a.t(), a, 2, -1), {4, 4},
               {-33, -30, -27, -24, -30, -30, -30, -30, -27, -30, -33, -36, -24, -30, -36, -42});
  // beta == 0 ignores self, NaNs included
  Tensor nan_self = full({3, 5}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(kFloat32));
  expect_values(addmm(nan_self, a, b, 0, 1), {3, 5}, kAB);
  // integer alpha/beta: floating scalars truncate (PyTorch 1.13: alpha=2.5 acts as 2)
  Tensor ai = ones({3, 4}, TensorOptions(kInt64)), bi = ones({4, 5}, TensorOptions(kInt64));
  Tensor ri = addmm(full({3, 5}, 1, TensorOptions(kInt64)), ai, bi, 3, 2.5);
  CHECK(ri.to_vector<int64_t>() == std::vector<int64_t>(15, 11));
  Tensor rt = addmm(full({3, 5}, 3, TensorOptions(kInt64)), ai, bi, 0.5, 2);  // beta 0.5 acts as 0
  CHECK(rt.to_vector<int64_t>() == std::vector<int64_t>(15, 8));
  Tensor rh = addmm(ones({5}, TensorOptions(kFloat16)), mat_a(kFloat16), mat_b(kFloat16), 1, 1);
  CHECK(rh.dtype() == kFloat16);
  expect_values(rh, {3, 5}, {3, -4, -11, -18, -25, 15, 16, 17, 18, 19, 27, 36, 45, 54, 63}, 1e-2);
  std::vector<complex<double>> cv = {{1, 2}, {3, -1}, {0, 0.5}, {2, 0}};
  Tensor cm = from_vector(cv, {2, 2});
  expect_complex(addmm(zeros({2, 2}, TensorOptions(kComplex128)), cm, cm.t(), 1, complex<double>(0, 1)),
                 {{2, 5}, {1.5, 5}, {1.5, 5}, {0, 3.75}});
}

TEST_CASE("addmm: errors") {
  Tensor a = mat_a(), b = mat_b();
  CHECK(has(error_text<ShapeError>([&] { addmm(zeros({3, 4}), a, b); }),
            "The expanded size of the tensor (5) must match the existing size (4) at non-singleton dimension 1"));
  CHECK(has(error_text<ShapeError>([&] { addmm(zeros({3, 5}), a, a); }),
            "mat1 and mat2 shapes cannot be multiplied (3x4 and 3x4)"));
  CHECK(has(error_text<DTypeError>([&] { addmm(zeros({3, 5}, TensorOptions(kFloat64)), a, b); }), "same dtype"));
  CHECK(has(error_text<DTypeError>([&] { addmm(zeros({3, 5}), a, mat_b(kFloat64)); }), "same dtype"));
  CHECK_THROWS_AS(addmm(zeros({3, 5}), a, b, 1, complex<double>(0, 1)), ValueError);
  CHECK_THROWS_AS(addmm(zeros({3, 5}), a.unsqueeze(0), b), ShapeError);
}

TEST_CASE("bmm: values, transposed batches, small-batch parallel path, fallback types") {
  Tensor ab = make_tensor_of<float>({2, 3, 4}, [](int64_t i) { return float(i) - 7; });
  Tensor bb = make_tensor_of<float>({2, 4, 5}, [](int64_t i) { return float(i) * 0.25f; });
  const std::vector<double> expected = {-35, -40.5, -46,  -51.5, -57,  -5,  -6.5,  -8,  -9.5,  -11,
                                        25,  27.5,  30,   32.5,  35,   185, 191.5, 198, 204.5, 211,
                                        295, 305.5, 316,  326.5, 337,  405, 419.5, 434, 448.5, 463};
  expect_values(bmm(ab, bb), {2, 3, 5}, expected);
  expect_values(bmm(ab.to(kFloat64), bb.to(kFloat64)), {2, 3, 5}, expected);
  expect_values(bmm(ab.to(kBFloat16), bb.to(kBFloat16)), {2, 3, 5}, expected, 1e-2);
  expect_values(bmm(ab.transpose(1, 2), ab), {2, 4, 4},
               {59,  50,  41,  32,  50,  44,  38,  32,  41,  38,  35,  32,  32,  32,  32,  32,
                275, 302, 329, 356, 302, 332, 362, 392, 329, 362, 395, 428, 356, 392, 428, 464});
  // batch dim with a step (non-contiguous across batches), integer fallback
  Tensor ab4 = make_tensor_of<int64_t>({4, 3, 4}, [](int64_t i) { return (i / 24) * 12 + i % 12 - 7; });
  Tensor picked = ab4.slice(0, 0, 4, 2);  // batches 0 and 2: equal to ab's batches 0 and 1
  Tensor bbi = make_tensor_of<int64_t>({2, 4, 5}, [](int64_t i) { return i; });  // 4 * bb
  expect_values(bmm(picked, bbi), {2, 3, 5}, [&] {
    std::vector<double> e = expected;
    for (double& v : e) v *= 4;
    return e;
  }());
  // many small products: run in parallel over the batch, each equal to mm of its slices
  Tensor many_a = make_tensor_of<float>({64, 4, 3}, [](int64_t i) { return float(i % 17) - 8; });
  Tensor many_b = make_tensor_of<float>({64, 3, 5}, [](int64_t i) { return float(i % 13) * 0.5f; });
  Tensor many = bmm(many_a, many_b);
  for (int64_t i : {0, 17, 63}) {
    INFO("batch " << i);
    CHECK(many.select(0, i).to_vector<float>() == mm(many_a.select(0, i), many_b.select(0, i)).to_vector<float>());
  }
  expect_values(bmm(zeros({0, 3, 4}), zeros({0, 4, 5})), {0, 3, 5}, {});
  expect_values(bmm(zeros({2, 3, 0}), zeros({2, 0, 5})), {2, 3, 5}, std::vector<double>(30, 0.0));
}

TEST_CASE("bmm: errors") {
  CHECK(has(error_text<ShapeError>([] { bmm(zeros({2, 3, 4}), zeros({3, 4, 5})); }),
            "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4]."));
  CHECK(has(error_text<ShapeError>([] { bmm(zeros({2, 3, 4}), zeros({2, 5, 5})); }),
            "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."));
  CHECK(has(error_text<ShapeError>([] { bmm(zeros({3, 4}), zeros({2, 4, 5})); }), "batch1 must be a 3D tensor"));
  CHECK(has(error_text<ShapeError>([] { bmm(zeros({2, 3, 4}), zeros({4, 5})); }), "batch2 must be a 3D tensor"));
  CHECK_THROWS_AS(bmm(zeros({2, 3, 4}), zeros({2, 4, 5}, TensorOptions(kFloat64))), DTypeError);
}
