// The CPU speed paths give the plain results: tiled transposed operands, broadcast-operand
// loops, vectorized libm, 32-lane and 4-row reductions, one-pass argmax, cumsum, parallel bmm,
// linear's weight gradient layout. Expected values are computed here element by element in double.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_helpers.h"
#include "kiln/gen/api/addcmul.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/argmin.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/erf.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/sigmoid.h"
#include "kiln/gen/api/tanh.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

// Values of `t` in its logical (row-major) order, as doubles.
std::vector<double> values(const Tensor& t) { return t.contiguous().to_vector<double>(); }

}  // namespace

TEST_CASE("fast paths: transposed inputs of odd sizes, through the tiled loop") {
  manual_seed(7);
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32}) {
    Tensor a = (randn({301, 67}) * 100).to(dt), b = (randn({67, 301}) * 100).to(dt);
    Tensor r = a.t() + b;
    std::vector<double> av = values(a), bv = values(b), rv = values(r);
    std::vector<double> want(rv.size());
    for (int64_t i = 0; i < 67; ++i)
      for (int64_t j = 0; j < 301; ++j) want[size_t(i * 301 + j)] = av[size_t(j * 67 + i)] + bv[size_t(i * 301 + j)];
    expect_values(r, {67, 301}, want, 1e-6);
  }
  // three inputs, two of them transposed, and a batch dim outside the tile
  Tensor s = randn({3, 50, 40}), x = randn({3, 40, 50}), y = randn({3, 40, 50});
  Tensor r = addcmul(s, x.transpose(1, 2), y.transpose(1, 2), 0.5);
  std::vector<double> sv = values(s), xv = values(x), yv = values(y), want(sv.size());
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 50; ++i)
      for (int64_t j = 0; j < 40; ++j) {
        size_t o = size_t((b * 50 + i) * 40 + j), t = size_t((b * 40 + j) * 50 + i);
        want[o] = sv[o] + 0.5 * xv[t] * yv[t];
      }
  expect_values(r, {3, 50, 40}, want, 1e-5);
}

TEST_CASE("fast paths: a transposed copy of a large matrix") {
  Tensor a = arange(0, 1000 * 700, 1, TensorOptions(DType::Float32)).reshape({1000, 700});
  Tensor c = a.t().contiguous();
  std::vector<double> cv = values(c);
  bool ok = true;
  for (int64_t i = 0; i < 700 && ok; ++i)
    for (int64_t j = 0; j < 1000 && ok; ++j) ok = cv[size_t(i * 1000 + j)] == double(j * 700 + i);
  CHECK(ok);
}

TEST_CASE("fast paths: a scalar or a row broadcast along the run") {
  Tensor x = randn({5000}), m = randn({37, 300}), row = randn({300}), col = randn({37, 1});
  std::vector<double> xv = values(x), mv = values(m), rv = values(row), cv = values(col);
  std::vector<double> twice(xv.size()), minus(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) twice[i] = double(float(xv[i]) * 2.5f), minus[i] = double(2.5f - float(xv[i]));
  expect_values(x * 2.5, {5000}, twice, 0);
  expect_values(2.5 - x, {5000}, minus, 0);
  std::vector<double> by_row(mv.size()), by_col(mv.size());
  for (size_t i = 0; i < 37; ++i)
    for (size_t j = 0; j < 300; ++j) {
      by_row[i * 300 + j] = double(float(mv[i * 300 + j]) + float(rv[j]));
      by_col[i * 300 + j] = double(float(mv[i * 300 + j]) * float(cv[i]));
    }
  expect_values(m + row, {37, 300}, by_row, 0);
  expect_values(m * col, {37, 300}, by_col, 0);
}

TEST_CASE("fast paths: vectorized exp, tanh, erf, sigmoid stay within a few ulp of libm in double") {
  std::vector<float> grid;
  for (int i = -4000; i <= 4000; ++i) grid.push_back(float(i) * 0.005f);  // [-20, 20]
  Tensor x = from_vector<float>(grid, {int64_t(grid.size())});
  std::vector<double> e = values(exp(x)), t = values(tanh(x)), f = values(erf(x)), s = values(sigmoid(x));
  auto close = [](double got, double want) { return std::fabs(got - want) <= 4 * 1.2e-7 * std::fabs(want) + 1e-30; };
  int bad = 0;
  for (size_t i = 0; i < grid.size(); ++i) {
    double v = grid[i];
    bad += !close(e[i], std::exp(v)) + !close(t[i], std::tanh(v)) + !close(f[i], std::erf(v)) +
           !close(s[i], 1 / (1 + std::exp(-v)));
  }
  CHECK(bad == 0);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor sp = from_vector<float>({-inf, inf, nan}, {3});
  expect_values(exp(sp), {3}, {0, INFINITY, NAN});
  expect_values(tanh(sp), {3}, {-1, 1, NAN});
  expect_values(erf(sp), {3}, {-1, 1, NAN});
  expect_values(sigmoid(sp), {3}, {0, 1, NAN});
}

TEST_CASE("fast paths: argmax and argmin of long rows pick the first tie and the first NaN") {
  std::vector<float> v(1000, 0.0f);
  v[17] = 5, v[900] = 5, v[300] = -5, v[301] = -5;
  Tensor t = from_vector<float>(v, {1, 1000});
  expect_values(argmax(t, 1), {1}, {17});
  expect_values(argmin(t, 1), {1}, {300});
  v[500] = NAN, v[600] = NAN;
  Tensor n = from_vector<float>(v, {1, 1000});
  expect_values(argmax(n, 1), {1}, {500});
  expect_values(argmin(n, 1), {1}, {500});
  Tensor flat = full({2, 700}, -INFINITY);
  expect_values(argmax(flat, 1), {2}, {0, 0});
  auto [values_, indices] = max(from_vector<float>(v, {1000}).reshape({1, 1000}), 1);
  expect_values(indices, {1}, {500});
  CHECK(std::isnan(values_.item<float>()));
}

TEST_CASE("fast paths: sums along long rows and down columns match a double sum") {
  manual_seed(3);
  Tensor rows = randn({3, 5000}), cols = randn({5000, 37});
  std::vector<double> rv = values(rows), cv = values(cols), want_rows(3, 0.0), want_cols(37, 0.0);
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 5000; ++j) want_rows[i] += double(float(rv[i * 5000 + j]));
  for (size_t i = 0; i < 5000; ++i)
    for (size_t j = 0; j < 37; ++j) want_cols[j] += double(float(cv[i * 37 + j]));
  expect_values(rows.sum(-1), {3}, want_rows, 1e-5);
  expect_values(cols.sum(0), {37}, want_cols, 1e-5);
}

TEST_CASE("fast paths: cumsum along the last dim and along an outer dim") {
  manual_seed(5);
  Tensor x = randn({13, 1000});
  std::vector<double> xv = values(x), want(xv.size());
  for (size_t i = 0; i < 13; ++i) {
    double acc = 0;
    for (size_t j = 0; j < 1000; ++j) want[i * 1000 + j] = acc += double(float(xv[i * 1000 + j]));
  }
  expect_values(cumsum(x, -1), {13, 1000}, want, 1e-4);
  Tensor k = arange(0, 40 * 3, 1, TensorOptions(DType::Int32)).reshape({40, 3});
  std::vector<double> kw(120);
  for (size_t j = 0; j < 3; ++j) {
    double acc = 0;
    for (size_t i = 0; i < 40; ++i) kw[i * 3 + j] = acc += double(i * 3 + j);
  }
  Tensor kc = cumsum(k, 0);
  CHECK(kc.dtype() == DType::Int64);
  expect_values(kc, {40, 3}, kw, 0);
}

TEST_CASE("fast paths: bmm of many small matrices equals one mm per entry") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = randn({16, 40, 50}, TensorOptions(dt)), b = randn({16, 50, 30}, TensorOptions(dt));
    Tensor r = bmm(a, b);
    for (int64_t i = 0; i < 16; i += 5) expect_values(r.select(0, i), {40, 30}, values(mm(a.select(0, i), b.select(0, i))), 1e-5);
  }
}

TEST_CASE("fast paths: linear's weight gradient arrives contiguous and equals grad^T @ input") {
  Tensor x = randn({8, 5}), w = randn({3, 5}).requires_grad_(), b = randn({3}).requires_grad_();
  linear(x, w, b).sum().backward();
  CHECK(w.grad().is_contiguous());
  std::vector<double> xv = values(x), want(15, 0.0);
  for (size_t o = 0; o < 3; ++o)
    for (size_t i = 0; i < 5; ++i)
      for (size_t n = 0; n < 8; ++n) want[o * 5 + i] += xv[n * 5 + i];
  expect_values(w.grad(), {3, 5}, want, 1e-5);
  expect_values(b.grad(), {3}, {8, 8, 8});
}

TEST_CASE("fast paths: set_num_threads sizes the pool and refuses nonsense") {
  const int before = get_num_threads();
  set_num_threads(1);
  CHECK(get_num_threads() == 1);
  std::string msg = error_text<ValueError>([] { set_num_threads(0); });
  CHECK(has(msg, "set_num_threads"));
  CHECK(has(msg, "n"));
  set_num_threads(before);
  CHECK(get_num_threads() == before);
}
