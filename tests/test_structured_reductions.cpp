// Reductions through their structured path (meta: reduction): the NaN-skipping sums, aminmax,
// and what out= does with the meta step's dtype rules. Expected values are computed with
// PyTorch 1.13 and hard-coded; the generated op tests check every dtype against stored references.
#include <doctest/doctest.h>

#include <limits>
#include <tuple>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/aminmax.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/nanmean.h"
#include "kiln/gen/api/nansum.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("nansum, nanmean: NaN is skipped, a slice of NaNs sums to 0 and averages to NaN") {
  Tensor x = from_vector<float>({1, NAN, 3, NAN, NAN, 2, NAN, NAN, NAN}, {3, 3});
  expect_values(nansum(x, {1}), {3}, {4, 2, 0});
  expect_values(nanmean(x, {1}), {3}, {2, 2, kNaN});
  expect_values(nansum(x), {}, {6});
  expect_values(nanmean(x), {}, {2});
  CHECK(nansum(from_vector<int32_t>({1, 2, 3, 4}, {2, 2}), {0}).dtype() == kInt64);
  // gradient: NaNs get none, the others 1 (nansum) or 1 / count (nanmean)
  Tensor y = from_vector<double>({1, NAN, 3, NAN, NAN, 2}, {2, 3}).requires_grad_();
  sum(nanmean(y, {1})).backward();
  expect_values(y.grad(), {2, 3}, {0.5, 0, 0.5, 0, 0, 1});
}

TEST_CASE("aminmax: min and max of one reduction, NaN propagating, no identity") {
  auto [lo, hi] = aminmax(from_vector<float>({1, NAN, 3, 4, -1, 2}, {2, 3}), 1);
  expect_values(lo, {2}, {kNaN, -1});
  expect_values(hi, {2}, {kNaN, 4});
  auto [a, b] = aminmax(from_vector<int64_t>({1, 5, 7, -2}, {2, 2}));
  CHECK(a.dim() == 0);
  expect_values(a, {}, {-2});
  expect_values(b, {}, {7});
  CHECK(has(error_text<IndexError>([] { aminmax(empty({0, 3})); }), "numel() == 0"));
  CHECK(has(error_text<IndexError>([] { aminmax(empty({0, 3}), 0); }), "non-zero size"));
}

TEST_CASE("reductions: out= takes the meta step's dtype rules") {
  Tensor ints = from_vector<int64_t>({1, 2, 3, 4}, {2, 2});
  Tensor out = empty({0}, TensorOptions(kFloat64));  // a sum computes in the out= dtype
  sum_out(out, ints, {1});
  CHECK(out.dtype() == kFloat64);
  expect_values(out, {2}, {3, 7});
  Tensor iout = from_vector<int64_t>({9, 9}, {2});  // a float mean cannot go into int64
  CHECK(has(error_text<DTypeError>([&] { mean_out(iout, from_vector<float>({1, 2, 3, 4}, {2, 2}), {0}); }),
            "can't be cast"));
  expect_values(iout, {2}, {9, 9});
  Tensor values = empty({0}), indices = empty({0}, TensorOptions(kInt64));
  max_out(values, indices, from_vector<float>({1, 5, 7, -2}, {2, 2}), 1);
  expect_values(values, {2}, {5, 7});
  expect_values(indices, {2}, {1, 0});
}

TEST_CASE("var: a constant slice has variance exactly 0, in any layout (Welford, as PyTorch)") {
  // A mean pass then a deviation pass left rounding noise of the mean squared: std 1.4e14 of an
  // expanded tensor of -1e30 (found by the fuzzer).
  Tensor x = full({1, 3, 3}, -1e30, TensorOptions(kComplex128)).expand({3, 3, 3});
  expect_values(var(x), {}, {0});
  expect_values(var(x.contiguous(), {0, 2}), {3}, {0, 0, 0});
  expect_values(var(from_vector<double>({1, 2, 3, 4}, {4})), {}, {1.6666666666666667}, 1e-15);
}
