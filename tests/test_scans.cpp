// The scan family through its structured path (meta: along_dim): cumsum, cumprod, logcumsumexp and
// their out= and in-place variants. Expected values are computed with PyTorch 1.13 and
// hard-coded; the generated op tests check every dtype against stored references.
#include <doctest/doctest.h>

#include <limits>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_cummaxmin_backward.h"
#include "kiln/gen/api/cummax.h"
#include "kiln/gen/api/cummin.h"
#include "kiln/gen/api/cumprod.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/logcumsumexp.h"
#include "kiln/gen/api/nancumsum.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("cumprod: the gradient is exact where a slice holds zeros") {
  Tensor x = from_vector<double>({2, 0, 3, 0, 5, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4}, {3, 5}).requires_grad_();
  Tensor y = cumprod(x, 1);
  expect_values(y, {3, 5}, {2, 0, 0, 0, 0, 1, 2, 6, 24, 120, 0, 0, 0, 0, 0});
  y.backward(from_vector<double>({1, 2, 3, 4, 5, 1, -1, 1, -1, 1, 0.5, 1, 1.5, 2, 2.5}, {3, 5}));
  expect_values(x.grad(), {3, 5}, {1, 22, 0, 0, 0, 101, 50, 34, 24, 24, 76.5, 0, 0, 0, 0}, 1e-12);
}

TEST_CASE("nancumsum: NaN counts as zero anywhere in a row, integers as cumsum, dtype= widens") {
  Tensor x = from_vector<double>({1, kNaN, 2, kNaN, 3}, {5}).requires_grad_();
  Tensor y = nancumsum(x, 0);
  expect_values(y, {5}, {1, 1, 3, 3, 6});
  // the gradient is cumsum's (a running sum from the end) where x is a number, 0 where NaN
  y.backward(ones({5}, TensorOptions(kFloat64)));
  expect_values(x.grad(), {5}, {5, 0, 3, 0, 1});

  // a long row (the CPU scan's blocks) with NaN at every 7th place: the count of the others
  std::vector<float> row(1000, 1.0f);
  for (size_t i = 0; i < row.size(); i += 7) row[i] = NAN;
  Tensor long_row = from_vector<float>(row, {1000});
  CHECK(nancumsum(long_row, 0).to_vector<float>().back() == 1000.0f - 143.0f);

  Tensor i = from_vector<int32_t>({4, -1, 7}, {3});
  Tensor yi = nancumsum(i, 0);
  CHECK(yi.dtype() == kInt64);  // integers accumulate in int64, as cumsum
  expect_values(yi, {3}, {4, 3, 10});
  Tensor wide = nancumsum(from_vector<float>({0.5f, NAN}, {2}), 0, kFloat64);
  CHECK(wide.dtype() == kFloat64);
  expect_values(wide, {2}, {0.5, 0.5});
}

TEST_CASE("logcumsumexp: infinities and NaN as PyTorch, no overflow") {
  Tensor z = from_vector<float>({-INFINITY, -INFINITY, 0, INFINITY, 1, NAN, 2}, {7});
  expect_values(logcumsumexp(z, 0), {7}, {-kInf, -kInf, 0, kInf, kInf, kNaN, kNaN});
  Tensor w = from_vector<float>({1000, 1000, -1000}, {3});
  expect_values(logcumsumexp(w, 0), {3}, {1000, 1000.6931762695312, 1000.6931762695312}, 1e-7);
}

TEST_CASE("scans: out= and in-place compute in the destination's dtype, as PyTorch's") {
  Tensor a = from_vector<int32_t>({1, 2, 3}, {3});
  a.cumsum_(0);
  CHECK(a.dtype() == kInt32);
  expect_values(a, {3}, {1, 3, 6});

  Tensor out = empty({0}, TensorOptions(kFloat64));  // resized, and the int64 input cast to float64
  cumsum_out(out, from_vector<int64_t>({1, 2, 3}, {3}), 0);
  CHECK(out.dtype() == kFloat64);
  expect_values(out, {3}, {1, 3, 6});

  Tensor iout = empty({3}, TensorOptions(kInt64));  // a float input is cast to the int64 out first
  cumsum_out(iout, from_vector<float>({1.5f, 2, 3}, {3}), 0);
  expect_values(iout, {3}, {1, 3, 6});

  // A non-contiguous out= is written through a temporary.
  Tensor wide = zeros({3, 2});
  Tensor column = wide.select(1, 1);
  cumprod_out(column, from_vector<float>({1, 2, 3}, {3}), 0);
  expect_values(wide, {3, 2}, {0, 1, 0, 2, 0, 6});
}

TEST_CASE("scans: refused variants leave their operands as they were") {
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor out = from_vector<int32_t>({7, 8, 9}, {3});
  // a float64 result cannot go into an int32 tensor
  CHECK(has(error_text<DTypeError>([&] { cumsum_out(out, x, 0, kFloat64); }), "can't be cast"));
  expect_values(out, {3}, {7, 8, 9});
  CHECK(has(error_text<IndexError>([&] { x.cumsum_(1); }), "dim"));
  expect_values(x, {3}, {1, 2, 3});
  Tensor leaf = from_vector<float>({1, 2, 3}, {3}).requires_grad_();
  CHECK(has(error_text<AutogradError>([&] { leaf.cumsum_(0); }), "leaf"));
  CHECK(has(error_text<AutogradError>([&] { cumsum_out(out, leaf, 0); }), "out="));
  Tensor b = from_vector<bool>({true, false}, {2});
  CHECK(has(error_text<DTypeError>([&] { cumsum(b, 0, kBool); }), "bool"));
}

TEST_CASE("scans: in-place under autograd records the op on the non-leaf") {
  Tensor x = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  Tensor y = x * 2;
  y.cumprod_(0);  // [2, 8, 48]
  expect_values(y, {3}, {2, 8, 48});
  sum(y).backward();
  // d/dx of 2x0 + 4x0x1 + 8x0x1x2 at (1, 2, 3): [2 + 8 + 48, 4 + 24, 16]
  expect_values(x.grad(), {3}, {58, 28, 16}, 1e-12);
}

TEST_CASE("scans: call by name reaches the out= and in-place variants") {
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor out = empty({0});
  call_out("cumsum", {out}, {Value(x), Value(int64_t(0))});
  expect_values(out, {3}, {1, 3, 6});
  Tensor y = x.clone();
  call_inplace("logcumsumexp", {Value(y), Value(int64_t(0))});
  expect_values(y, {3}, {1, 2.3132617, 3.4076059}, 1e-6);
  CHECK(has(error_text<ValueError>([&] { call_inplace("_cumsum_reverse", {Value(y), Value(int64_t(0))}); }),
            "no in-place variant"));
}

TEST_CASE("cummax, cummin: the last of equal values wins, NaN stays once seen, gradients follow the indices") {
  Tensor x = from_vector<double>({1, 3, 3, 2, NAN, 5, 0}, {7});
  auto [hi, hi_at] = cummax(x, 0);
  expect_values(hi, {7}, {1, 3, 3, 3, kNaN, kNaN, kNaN});
  expect_values(hi_at, {7}, {0, 1, 2, 2, 4, 4, 4});
  auto [lo, lo_at] = cummin(x, 0);
  expect_values(lo, {7}, {1, 1, 1, 1, kNaN, kNaN, kNaN});
  expect_values(lo_at, {7}, {0, 0, 0, 0, 4, 4, 4});
  auto [b, b_at] = cummax(from_vector<bool>({true, false, true}, {3}), 0);
  expect_values(b_at, {3}, {0, 0, 2});

  Tensor y = from_vector<double>({1, 3, 2, 4, 0, 4}, {2, 3}).requires_grad_();
  auto [v, at] = cummax(y, 1);
  expect_values(at, {2, 3}, {0, 1, 1, 0, 0, 2});
  sum(v * from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3})).backward();
  expect_values(y.grad(), {2, 3}, {1, 5, 0, 9, 0, 6});
  CHECK(has(error_text<IndexError>([&] {
              _cummaxmin_backward(ones({3}, TensorOptions(kFloat64)), from_vector<int64_t>({0, 3, 1}, {3}), 0);
            }),
            "out of bounds"));
}
