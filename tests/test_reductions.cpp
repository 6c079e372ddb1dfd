// Reduction kernels (kernels/cpu/reduce_*.cpp, arg_reduce.cpp): values, result dtypes, keepdim,
// negative dims, non-contiguous inputs, NaN behaviour and errors. Expected values are derived by
// hand or computed with PyTorch 1.13 and hard-coded.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/amin.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/argmin.h"
#include "kiln/gen/api/count_nonzero.h"
#include "kiln/gen/api/logsumexp.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/min.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/nansum.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const float kNaNf = std::numeric_limits<float>::quiet_NaN();

// 0, 1, ..., numel-1 as float32 in `shape`.
Tensor iota_f32(std::vector<int64_t> shape) {
  std::vector<float> v(size_t(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return from_vector(v, shape);
}

}  // namespace

TEST_CASE("sum: all dims, dim lists, keepdim and negative dims") {
  Tensor x = iota_f32({2, 3, 4});
  expect_values(sum(x), {}, {276});
  expect_values(sum(x, {1}, true), {2, 1, 4}, {12, 15, 18, 21, 48, 51, 54, 57});
  expect_values(sum(x, {0, 2}), {3}, {60, 92, 124});
  expect_values(sum(x, {-1}), {2, 3}, {6, 22, 38, 54, 70, 86});
  expect_values(sum(x, {2, 0}, true), {1, 3, 1}, {60, 92, 124});
  expect_values(sum(x, std::vector<int64_t>{}), {}, {276});  // an empty list reduces everything (PyTorch 1.13)
  CHECK(sum(x).dtype() == kFloat32);
}

TEST_CASE("sum: non-contiguous inputs (transposed, sliced, expanded)") {
  Tensor x = iota_f32({2, 3, 4});
  Tensor xt = x.transpose(0, 2);  // [4, 3, 2]
  expect_values(sum(xt, {0}), {3, 2}, {6, 54, 22, 70, 38, 86});
  expect_values(sum(xt, {1}), {4, 2}, {12, 48, 15, 51, 18, 54, 21, 57});
  expect_values(sum(xt, {0, 2}), {3}, {60, 92, 124});
  Tensor m = iota_f32({3, 4});
  expect_values(sum(m.t(), {1}), {4}, {12, 15, 18, 21});  // kept dim is the fast one
  expect_values(sum(m.slice(1, 0, 4, 2), {0}), {2}, {12, 18});
  Tensor e = from_vector<float>({1, 2, 3}, {3, 1}).expand({3, 4});
  expect_values(sum(e, {1}), {3}, {4, 8, 12});
  expect_values(sum(e, {0}), {4}, {6, 6, 6, 6});
}

TEST_CASE("sum: result dtypes follow PyTorch") {
  Tensor i32 = from_vector<int32_t>({1, 2, 3, 2147483647}, {4});
  Tensor s = sum(i32);
  CHECK(s.dtype() == kInt64);
  CHECK(s.item<int64_t>() == int64_t(2147483653));  // accumulates in int64, no int32 overflow
  Tensor b = from_vector<bool>({true, true, false}, {3});
  CHECK(sum(b).dtype() == kInt64);
  CHECK(sum(b).item<int64_t>() == 2);
  CHECK(sum(b, std::nullopt, false, kBool).dtype() == kBool);
  CHECK(sum(b, std::nullopt, false, kBool).item<bool>() == true);
  Tensor i8 = from_vector<int8_t>({100, 100}, {2});
  CHECK(sum(i8).item<int64_t>() == 200);
  Tensor wrapped = sum(i8, std::nullopt, false, kInt8);  // dtype= keeps int8 and wraps like PyTorch
  CHECK(wrapped.dtype() == kInt8);
  CHECK(wrapped.item<int64_t>() == -56);
  Tensor f = from_vector<float>({1.5f, 2.5f}, {2});
  Tensor as_int = sum(f, std::nullopt, false, kInt64);  // dtype= casts the input first
  CHECK(as_int.dtype() == kInt64);
  CHECK(as_int.item<int64_t>() == 3);
  Tensor as_f64 = sum(from_vector<int64_t>({1, 2}, {2}), std::nullopt, false, kFloat64);
  CHECK(as_f64.dtype() == kFloat64);
  CHECK(as_f64.item<double>() == 3.0);
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kFloat16);
  CHECK(sum(h).dtype() == kFloat16);
  expect_values(sum(h), {}, {1.0}, 1e-3);
  Tensor bf = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kBFloat16);
  CHECK(sum(bf).dtype() == kBFloat16);
  expect_values(sum(bf), {}, {1.0}, 1e-2);
  Tensor c = from_vector<complex<float>>({{1, 2}, {3, -1}}, {2});
  Tensor cs = sum(c);
  CHECK(cs.dtype() == kComplex64);
  CHECK(cs.item().to<complex<double>>() == complex<double>(4, 1));
}

TEST_CASE("sum: empty reductions give 0, bad dims are errors") {
  Tensor z = zeros({0, 3});
  expect_values(sum(z, {0}), {3}, {0, 0, 0});
  expect_values(sum(z), {}, {0});
  expect_values(sum(z, {1}), {0}, {});
  Tensor x = iota_f32({2, 3});
  CHECK(has(error_text<ValueError>([&] { sum(x, {1, 1}); }), "dim 1 appears multiple times in the list of dims"));
  CHECK(has(error_text<ValueError>([&] { sum(x, {1, -1}); }), "appears multiple times"));
  CHECK_THROWS_AS(sum(x, {2}), IndexError);
  CHECK_THROWS_AS(sum(x, {-3}), IndexError);
  // a 0-d tensor accepts dim 0 / -1 and stays 0-d
  Tensor s = scalar_tensor(5.0, TensorOptions(kFloat32));
  expect_values(sum(s, {0}, true), {}, {5});
  expect_values(sum(s, {-1}), {}, {5});
  CHECK_THROWS_AS(sum(s, {1}), IndexError);
}

TEST_CASE("all/any: chunked partials of few outputs are not packed bits (a race on 2 threads)") {
  // [65536, 3] reduced over dim 0: 3 outputs, each cut into 32 chunks whose bool partials
  // neighbouring threads write side by side; packed into bits they raced on one word.
  Tensor x = ones({65536, 3}, TensorOptions(kBool));
  x.select(0, 40000).select(0, 1).fill_(Scalar(false));
  Tensor y = zeros({65536, 3}, TensorOptions(kBool));
  y.select(0, 50000).select(0, 2).fill_(Scalar(true));
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  int wrong = 0;
  for (int i = 0; i < 1000; ++i) {
    if (all(x, 0).to_vector<bool>() != std::vector<bool>{true, false, true}) ++wrong;
    if (any(y, 0).to_vector<bool>() != std::vector<bool>{false, false, true}) ++wrong;
  }
  omp_set_num_threads(before);
  CHECK(wrong == 0);
}

TEST_CASE("sum: long reductions are accurate and do not depend on the thread count") {
  // 2^25 float32 ones: a naive float accumulator would stop at 2^24.
  Tensor ones_big = ones({int64_t(1) << 25}, TensorOptions(kFloat32));
  CHECK(sum(ones_big).item<double>() == double(int64_t(1) << 25));
  // vertical (reducing the slow dim) with few outputs: the reduction is split into chunks
  Tensor tall = ones({300000, 3}, TensorOptions(kFloat32));
  expect_values(sum(tall, {0}), {3}, {300000, 300000, 300000});
  // irregular values; bitwise-identical results for 1 and 2 threads
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(std::sin(double(i) * 0.37)) * 3.0f;
  Tensor x = from_vector(v, {int64_t(v.size())});
  Tensor x2 = x.reshape({1024, 1024});
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  double one_all = sum(x).item<double>();
  std::vector<float> one_rows = sum(x2, {0}).to_vector<float>();
  double one_var = var(x).item<double>();
  omp_set_num_threads(2);
  double two_all = sum(x).item<double>();
  std::vector<float> two_rows = sum(x2, {0}).to_vector<float>();
  double two_var = var(x).item<double>();
  omp_set_num_threads(before);
  CHECK(one_all == two_all);
  CHECK(one_rows == two_rows);
  CHECK(one_var == two_var);
  double ref = 0;
  for (float f : v) ref += f;
  CHECK(std::fabs(one_all - ref) < 1e-3);
  // float32 runs add blocks of 1024 in float lanes, the blocks in double: 2^24 tenths stay within
  // a few float ulp of the exact sum (a float accumulator would stall at 2^21)
  const double tenths = sum(full({int64_t(1) << 24}, 0.1f, TensorOptions(kFloat32))).item<double>();
  CHECK(std::fabs(tenths - double(0.1f) * double(int64_t(1) << 24)) < 1e-6 * tenths);
  // rows of 16 to 63 (8 lanes), a tail, NaN skipped by nansum, against a double loop
  Tensor rows49 = narrow(x, 0, 0, 49 * 1000).reshape({1000, 49});
  std::vector<float> got49 = sum(rows49, {1}).to_vector<float>();
  for (int64_t r = 0; r < 1000; r += 111) {
    double want = 0;
    for (int64_t c = 0; c < 49; ++c) want += v[size_t(r * 49 + c)];
    CHECK(got49[size_t(r)] == doctest::Approx(want).epsilon(1e-5));
  }
  // rows of 100 (8 lanes) and 300 (four 16-lane vectors, then one, then a tail), NaN skipped
  for (int64_t len : {int64_t(100), int64_t(300)}) {
    std::vector<float> data(v.begin(), v.begin() + 40 * len);
    for (size_t i = 5; i < data.size(); i += 97) data[i] = NAN;
    Tensor rows = from_vector(data, {40, len});
    const std::vector<float> got = nansum(rows, {1}).to_vector<float>(), got_sum = sum(rows, {1}).to_vector<float>();
    for (int64_t r = 0; r < 40; ++r) {
      double want = 0;
      bool any_nan = false;
      for (int64_t c = 0; c < len; ++c) {
        const float f = data[size_t(r * len + c)];
        if (f == f) want += f;
        else any_nan = true;
      }
      CHECK(got[size_t(r)] == doctest::Approx(want).epsilon(1e-5));
      CHECK(std::isnan(got_sum[size_t(r)]) == any_nan);
    }
  }
  std::vector<float> holes(v.begin(), v.begin() + 5000);
  double want_nan = 0;
  for (size_t i = 0; i < holes.size(); ++i) {
    if (i % 7 == 3) holes[i] = NAN;
    else want_nan += holes[i];
  }
  CHECK(nansum(from_vector(holes, {5000})).item<double>() == doctest::Approx(want_nan).epsilon(1e-5));
}

TEST_CASE("mean: values, dtype= and errors") {
  Tensor x = iota_f32({2, 3, 4});
  expect_values(mean(x), {}, {11.5});
  expect_values(mean(x, {1}), {2, 4}, {4, 5, 6, 7, 16, 17, 18, 19});
  expect_values(mean(x, {-1}, true), {2, 3, 1}, {1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  expect_values(mean(x.transpose(0, 2), {0, 1}), {2}, {5.5, 17.5});
  Tensor d = mean(x, std::nullopt, false, kFloat64);
  CHECK(d.dtype() == kFloat64);
  expect_values(d, {}, {11.5});
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kFloat16);
  CHECK(mean(h).dtype() == kFloat16);
  expect_values(mean(h), {}, {0.25}, 1e-3);
  Tensor c = from_vector<complex<double>>({{1, 2}, {3, -1}}, {2});
  CHECK(mean(c).item().to<complex<double>>() == complex<double>(2, 0.5));
  CHECK(has(error_text<DTypeError>([&] { mean(x, std::nullopt, false, kInt64); }),
            "Optional dtype must be either a floating point or complex dtype"));
  expect_values(mean(zeros({0, 3}), {0}), {3}, {kNaN, kNaN, kNaN});
}

TEST_CASE("prod and prod.dim_int") {
  Tensor i = from_vector<int32_t>({1, 2, 3, 4, 5, -1}, {2, 3});
  Tensor p = prod(i);
  CHECK(p.dtype() == kInt64);
  CHECK(p.item<int64_t>() == -120);
  Tensor pd = prod(i, 1, false);
  CHECK(pd.dtype() == kInt64);
  expect_values(pd, {2}, {6, -20});
  expect_values(prod(i, 0, true), {1, 3}, {4, 10, -3});
  expect_values(prod(i, -1, false, kFloat64), {2}, {6, -20});
  CHECK(prod(i, -1, false, kFloat64).dtype() == kFloat64);
  Tensor f = from_vector<float>({0.5f, 4.0f, 1.5f, 2.0f}, {2, 2});
  expect_values(prod(f.t(), 1), {2}, {0.75, 8});
  expect_values(prod(zeros({0})), {}, {1});
  expect_values(prod(zeros({2, 0}), 1), {2}, {1, 1});
  Tensor b = from_vector<bool>({true, false}, {2});
  CHECK(prod(b).dtype() == kInt64);
  CHECK(prod(b).item<int64_t>() == 0);
  CHECK_THROWS_AS(prod(f, 2), IndexError);
}

TEST_CASE("amax / amin / max() / min(): values, NaN, empty errors") {
  Tensor x = from_vector<float>({1, -2, 3.5f, 0, 4, 5, -6, 7.25f, -8, 9, 10, -11}, {3, 4});
  expect_values(amax(x), {}, {10});
  expect_values(amin(x), {}, {-11});
  expect_values(amax(x, {1}), {3}, {3.5, 7.25, 10});
  expect_values(amin(x, {0}, true), {1, 4}, {-8, -2, -6, -11});
  expect_values(amax(x.t(), {0}), {3}, {3.5, 7.25, 10});
  expect_values(amax(x, {-1, 0}), {}, {10});
  expect_values(max(x), {}, {10});
  expect_values(min(x), {}, {-11});
  Tensor n = from_vector<float>({1, kNaNf, 3}, {3});
  expect_values(amax(n), {}, {kNaN});
  expect_values(amin(n), {}, {kNaN});
  expect_values(max(n), {}, {kNaN});
  Tensor nn = from_vector<float>({1, 2, 3, kNaNf, 5, 6}, {2, 3});
  expect_values(amax(nn, {1}), {2}, {3, kNaN});
  Tensor i = from_vector<int64_t>({3, -7, 12}, {3});
  CHECK(amax(i).dtype() == kInt64);
  CHECK(amax(i).item<int64_t>() == 12);
  CHECK(min(i).item<int64_t>() == -7);
  Tensor b = from_vector<bool>({true, false}, {2});
  CHECK(amax(b).item<bool>() == true);
  CHECK(amin(b).item<bool>() == false);
  // big enough to take the parallel, lane-vectorized paths
  std::vector<float> big(100000);
  for (size_t k = 0; k < big.size(); ++k) big[k] = float(k % 1000) - 500.0f;
  big[77777] = 1e6f;
  CHECK(max(from_vector(big, {100000})).item<double>() == 1e6);
  big[12345] = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(max(from_vector(big, {100000})).item<double>()));

  Tensor empty_rows = zeros({0, 3});
  CHECK(has(error_text<IndexError>([&] { max(empty_rows); }),
            "max(): Expected reduction dim to be specified for input.numel() == 0."));
  CHECK(has(error_text<IndexError>([&] { amin(empty_rows); }), "amin(): Expected reduction dim to be specified"));
  CHECK(has(error_text<IndexError>([&] { amax(empty_rows, {0}); }),
            "amax(): Expected reduction dim 0 to have non-zero size."));
  expect_values(amax(empty_rows, {1}), {0}, {});  // nothing to reduce per output, no outputs
}

TEST_CASE("max.dim / min.dim: values, first-occurrence indices, NaN, keepdim") {
  Tensor x = from_vector<float>({1, -2, 3.5f, 0, 4, 5, -6, 7.25f, -8, 9, 10, -11}, {3, 4});
  auto [v1, i1] = max(x, 1);
  expect_values(v1, {3}, {3.5, 7.25, 10});
  CHECK(i1.dtype() == kInt64);
  expect_values(i1, {3}, {2, 3, 2});
  auto [v0, i0] = min(x, 0, true);
  expect_values(v0, {1, 4}, {-8, -2, -6, -11});
  expect_values(i0, {1, 4}, {2, 0, 1, 2});
  auto [vt, it] = max(x.t(), -1);  // transposed: reduce the slow dim
  expect_values(vt, {4}, {4, 9, 10, 7.25});
  expect_values(it, {4}, {1, 2, 2, 1});
  // ties: the first occurrence; NaN wins for both max and min (the first NaN)
  auto [tv, ti] = max(from_vector<float>({1, 3, 3, 2}, {4}), 0);
  CHECK(ti.item<int64_t>() == 1);
  auto [nv, ni] = min(from_vector<float>({1, kNaNf, 3, kNaNf}, {4}), 0);
  CHECK(std::isnan(nv.item<double>()));
  CHECK(ni.item<int64_t>() == 1);
  auto [mv, mi] = max(from_vector<float>({1, kNaNf, 3, kNaNf}, {4}), 0);
  CHECK(mi.item<int64_t>() == 1);
  // 0-d input: dim 0 or -1, index 0
  auto [sv, si] = max(scalar_tensor(5.0, TensorOptions(kFloat32)), -1, true);
  expect_values(sv, {}, {5});
  expect_values(si, {}, {0});
  // long reduction with the maximum near the end and ties across chunk boundaries
  std::vector<int32_t> big(200000, 7);
  big[150001] = 9;
  big[199999] = 9;
  auto [bv, bi] = max(from_vector(big, {200000}), 0);
  CHECK(bv.item<int64_t>() == 9);
  CHECK(bi.item<int64_t>() == 150001);
  auto [ev, ei] = max(zeros({0, 3}), 1);
  CHECK(ev.sizes().vec() == std::vector<int64_t>{0});
  CHECK(has(error_text<IndexError>([&] { max(zeros({0, 3}), 0); }),
            "max(): Expected reduction dim 0 to have non-zero size."));
  CHECK_THROWS_AS(min(x, 2), IndexError);
}

TEST_CASE("argmax / argmin: flattened, along a dim, keepdim") {
  Tensor x = from_vector<float>({1, -2, 3.5f, 0, 4, 5, -6, 7.25f, -8, 9, 10, -11}, {3, 4});
  CHECK(argmax(x).item<int64_t>() == 10);
  CHECK(argmin(x).item<int64_t>() == 11);
  // dim=None indexes the flattened (logical, row-major) tensor even when transposed
  CHECK(argmax(x.t()).item<int64_t>() == 8);  // 10 is x[2][2] = x.t()[2][2], flat 2 * 3 + 2
  CHECK(argmin(x.t()).item<int64_t>() == 11);
  Tensor k = argmax(x, std::nullopt, true);
  CHECK(k.sizes().vec() == std::vector<int64_t>{1, 1});
  CHECK(k.item<int64_t>() == 10);
  expect_values(argmax(x, 0), {4}, {1, 2, 2, 1});
  expect_values(argmin(x, -1, true), {3, 1}, {1, 2, 3});
  CHECK(argmax(from_vector<float>({1, 3, 3}, {3})).item<int64_t>() == 1);
  CHECK(argmin(from_vector<float>({1, kNaNf, 3, kNaNf}, {4})).item<int64_t>() == 1);
  CHECK(argmax(from_vector<int16_t>({4, 9, -1}, {3})).item<int64_t>() == 1);
  CHECK(has(error_text<IndexError>([&] { argmax(zeros({0, 3})); }),
            "argmax(): Expected reduction dim to be specified for input.numel() == 0."));
  CHECK(has(error_text<IndexError>([&] { argmin(zeros({0, 3}), 0); }),
            "argmin(): Expected reduction dim 0 to have non-zero size."));
}

TEST_CASE("argmax / max.dim: long contiguous rows (vectorized path) keep first-occurrence semantics") {
  std::vector<float> row(64, 0.0f);
  row[13] = 5.0f;
  row[10] = 5.0f;  // same value in an earlier index of a different lane
  row[40] = -7.0f;
  row[41] = -7.0f;
  Tensor r = from_vector(row, {1, 64});
  CHECK(argmax(r).item<int64_t>() == 10);
  CHECK(argmin(r, 1).item<int64_t>() == 40);
  auto [v, i] = max(r, 1);
  CHECK(v.item<double>() == 5.0);
  CHECK(i.item<int64_t>() == 10);
  row[50] = kNaNf;
  row[33] = kNaNf;
  Tensor rn = from_vector(row, {64});
  CHECK(argmax(rn).item<int64_t>() == 33);
  CHECK(argmin(rn).item<int64_t>() == 33);
  // -0.0 and 0.0 are equal: the first of them wins
  std::vector<float> z(40, -1.0f);
  z[20] = -0.0f;
  z[25] = 0.0f;
  CHECK(argmax(from_vector(z, {40})).item<int64_t>() == 20);
  // many rows at once, each with its maximum at a different place
  std::vector<int16_t> m(16 * 100);
  for (int i = 0; i < 1600; ++i) m[size_t(i)] = int16_t((i * 37) % 100);
  std::vector<int64_t> expected;
  for (int rr = 0; rr < 16; ++rr) {
    int best = 0;
    for (int c = 1; c < 100; ++c)
      if (m[size_t(rr * 100 + c)] > m[size_t(rr * 100 + best)]) best = c;
    expected.push_back(best);
  }
  CHECK(argmax(from_vector(m, {16, 100}), 1).to_vector<int64_t>() == expected);
}

TEST_CASE("var: correction, dims, complex input, degenerate divisors") {
  Tensor v = from_vector<float>({1, 2, 3, 4}, {4});
  expect_values(var(v), {}, {1.6666666666666667});
  expect_values(var(v, std::nullopt, Scalar(0)), {}, {1.25});
  expect_values(var(v, std::nullopt, Scalar(1.5)), {}, {2.0});       // 5 / 2.5
  expect_values(var(v, std::nullopt, Scalar(4)), {}, {kInf});        // 5 / max(0, 0)
  expect_values(var(v, std::nullopt, Scalar(5)), {}, {kInf});
  expect_values(var(ones({3}), {0}, Scalar(3)), {}, {kNaN});          // 0 / 0
  expect_values(var(from_vector<float>({1}, {1})), {}, {kNaN});
  expect_values(var(zeros({0, 3}), {0}), {3}, {kNaN, kNaN, kNaN});
  Tensor x = iota_f32({2, 3, 4});
  expect_values(var(x, {1}), {2, 4}, {16, 16, 16, 16, 16, 16, 16, 16});
  expect_values(var(x, {0, 2}, Scalar(0)), {3}, {37.25, 37.25, 37.25});
  expect_values(var(x.transpose(0, 2), {1}, std::nullopt, true), {4, 1, 2}, {16, 16, 16, 16, 16, 16, 16, 16});
  expect_values(var(x), {}, {50});
  // values with a large mean: the two-pass algorithm keeps full precision
  expect_values(var(from_vector<float>({10000001, 10000002, 10000003, 10000004}, {4})), {}, {1.6666666666666667});
  Tensor c = from_vector<complex<float>>({{1, 1}, {2, 0}, {0, 3}}, {3});
  Tensor cv = var(c);
  CHECK(cv.dtype() == kFloat32);
  expect_values(cv, {}, {3.3333333333333335});
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kFloat16);
  CHECK(var(h).dtype() == kFloat16);
  expect_values(var(h), {}, {0.01666259765625}, 1e-6);
}

TEST_CASE("norm: p = 2, 1, inf, -inf, 0, general, complex") {
  Tensor v = from_vector<float>({3, -4, 0}, {3});
  expect_values(norm(v), {}, {5});
  expect_values(norm(v, std::nullopt), {}, {5});  // None means 2
  expect_values(norm(v, 1), {}, {7});
  expect_values(norm(v, kInf), {}, {4});
  expect_values(norm(v, -kInf), {}, {0});
  expect_values(norm(v, 0), {}, {2});
  expect_values(norm(v, 3), {}, {4.497941445275415});
  expect_values(norm(v, 0.5), {}, {13.928203230275509});
  expect_values(norm(v, -1), {}, {0});
  expect_values(norm(from_vector<float>({3, -4, 1}, {3}), -1), {}, {0.631578947368421});
  Tensor x = iota_f32({2, 3, 4});
  expect_values(norm(x), {}, {65.75712585449219});
  expect_values(norm(x, 3), {}, {42.39091110229492});
  expect_values(norm(x, 2, {1}), {2, 4},
                {8.9442720413208, 10.344079971313477, 11.832159996032715, 13.379088401794434, 28.284271240234375,
                 29.983327865600586, 31.685958862304688, 33.39161682128906});
  expect_values(norm(x.transpose(0, 2), 1, {0, 1}), {2}, {66, 210});
  expect_values(norm(x, kInf, {2}, true), {2, 3, 1}, {3, 7, 11, 15, 19, 23});
  Tensor c = from_vector<complex<float>>({{3, 4}, {1, 0}}, {2});
  CHECK(norm(c).dtype() == kFloat32);
  expect_values(norm(c), {}, {5.0990195135927845});
  expect_values(norm(c, 1), {}, {6});
  expect_values(norm(from_vector<complex<double>>({{1, 2}, {3, -1}}, {2}), 1), {}, {5.39834563766817});
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kFloat16);
  CHECK(norm(h).dtype() == kFloat16);
  expect_values(norm(h), {}, {0.54736328125}, 1e-3);
  expect_values(norm(zeros({0}), kInf), {}, {0});
  expect_values(norm(zeros({0}), -kInf), {}, {0});
  CHECK_THROWS_AS(norm(v, Scalar(complex<double>(1, 1))), ValueError);
}

TEST_CASE("logsumexp: stable, infinite and NaN rows, dims") {
  const double inf = kInf;
  Tensor r = from_vector<float>({float(-inf), float(-inf), float(inf), 1, float(kNaN), 1, float(inf), float(-inf)}, {4, 2});
  expect_values(logsumexp(r, {1}), {4}, {-inf, inf, kNaN, inf});
  expect_values(logsumexp(from_vector<float>({1000, 1000}, {2}), {0}), {}, {1000.6931471805599});
  expect_values(logsumexp(from_vector<double>({-1000, -1000}, {2}), {0}), {}, {-999.3068528194401}, 1e-12);
  Tensor x = iota_f32({2, 3, 4});
  expect_values(logsumexp(x, {0, 2}), {3}, {15.44019603729248, 19.440195083618164, 23.440195083618164});
  expect_values(logsumexp(x, {1}, true), {2, 1, 4},
                {8.018479347229004, 9.018479347229004, 10.018479347229004, 11.018479347229004, 20.018478393554688,
                 21.018478393554688, 22.018478393554688, 23.018478393554688});
  expect_values(logsumexp(x.transpose(0, 2), {0}), {3, 2},
                {3.4401895999908447, 15.440189361572266, 7.440189838409424, 19.440189361572266, 11.440189361572266,
                 23.440189361572266});
  expect_values(logsumexp(zeros({0, 2}), {0}), {2}, {-inf, -inf});
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4}).to(kFloat16);
  CHECK(logsumexp(h, {0}).dtype() == kFloat16);
  expect_values(logsumexp(h, {0}), {}, {1.642578125}, 1e-3);
  CHECK_THROWS_AS(logsumexp(x, {3}), IndexError);
}

TEST_CASE("all / any: result dtype, dims, NaN and complex truthiness") {
  Tensor u = from_vector<uint8_t>({1, 0, 2, 3}, {2, 2});
  CHECK(all(u).dtype() == kUInt8);  // PyTorch 1.13 keeps uint8 for uint8 inputs
  CHECK(all(u).item<int64_t>() == 0);
  CHECK(any(u).item<int64_t>() == 1);
  expect_values(all(u, 0), {2}, {1, 0});
  CHECK(all(u, 0).dtype() == kUInt8);
  expect_values(any(u, 1, true), {2, 1}, {1, 1});
  Tensor f = from_vector<float>({1, 0, float(kNaN), 2}, {2, 2});
  CHECK(all(f).dtype() == kBool);
  CHECK(all(f).item<bool>() == false);
  expect_values(all(f, 0), {2}, {1, 0});
  expect_values(all(f, 1), {2}, {0, 1});   // NaN is nonzero
  expect_values(any(f.t(), 1), {2}, {1, 1});
  Tensor c = from_vector<complex<float>>({{0, 1}, {0, 0}}, {2});
  CHECK(any(c).item<bool>() == true);
  CHECK(all(c).item<bool>() == false);
  CHECK(all(zeros({0})).item<bool>() == true);
  CHECK(any(zeros({0})).item<bool>() == false);
  CHECK(all(scalar_tensor(2.0, TensorOptions(kFloat32)), 0, true).item<bool>() == true);
  CHECK_THROWS_AS(any(f, 2), IndexError);
}

TEST_CASE("count_nonzero: all dims and dim lists") {
  Tensor x = from_vector<float>({0, 1, 2, 0, 0, float(kNaN)}, {2, 3});
  Tensor n = count_nonzero(x);
  CHECK(n.dtype() == kInt64);
  CHECK(n.item<int64_t>() == 3);
  expect_values(count_nonzero(x, {1}), {2}, {2, 1});
  expect_values(count_nonzero(x, {0}), {3}, {0, 1, 2});
  expect_values(count_nonzero(x.t(), {0}), {2}, {2, 1});
  expect_values(count_nonzero(x, {0, 1}), {}, {3});
  CHECK_THROWS_AS(count_nonzero(x, {0, 0}), ValueError);
}
