// The activations of ops/activations.yaml beyond the generated tests: the kinks and saturations
// PyTorch's kernels define, argument errors, and rrelu's random slopes. Expected values were
// computed with PyTorch 1.13 (torch.nn.functional, float64 unless noted).
#include <doctest/doctest.h>

#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/generator.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/celu.h"
#include "kiln/gen/api/glu.h"
#include "kiln/gen/api/hardshrink.h"
#include "kiln/gen/api/hardsigmoid.h"
#include "kiln/gen/api/hardswish.h"
#include "kiln/gen/api/leaky_relu.h"
#include "kiln/gen/api/log_sigmoid.h"
#include "kiln/gen/api/prelu.h"
#include "kiln/gen/api/rrelu.h"
#include "kiln/gen/api/selu.h"
#include "kiln/gen/api/softshrink.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/threshold.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
Tensor kinks() { return from_vector<double>({-4, -3, -1.5, 0, 1.5, 3, 4}, {7}); }
}  // namespace

TEST_CASE("hardswish and hardsigmoid: values and gradients at and around the kinks at -3 and 3") {
  expect_values(hardswish(kinks()), {7}, {0, 0, -0.375, 0, 1.125, 3, 4}, 1e-15);
  expect_values(hardsigmoid(kinks()), {7}, {0, 0, 0.25, 0.5, 0.75, 1, 1}, 1e-15);
  Tensor x = kinks().requires_grad_(true);
  sum(hardswish(x)).backward();
  // PyTorch's rule: 0 below -3, x / 3 + 0.5 on [-3, 3] (both ends included), 1 above
  expect_values(x.grad(), {7}, {0, -0.5, 0, 0.5, 1, 1.5, 1}, 1e-15);
  Tensor y = kinks().requires_grad_(true);
  sum(hardsigmoid(y)).backward();
  expect_values(y.grad(), {7}, {0, 0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 0, 0}, 1e-15);
}

TEST_CASE("selu, celu, log_sigmoid: values, and log_sigmoid does not overflow") {
  expect_values(selu(kinks()), {7},
                {-1.7258986281898945, -1.6705687287671118, -1.3658143533672527, 0.0, 1.5760514810332207,
                 3.1521029620664414, 4.202803949421922},
                1e-14);
  expect_values(celu(kinks(), 0.5), {7},
                {-0.49983226868604874, -0.4987606239116668, -0.475106465816068, 0.0, 1.5, 3.0, 4.0}, 1e-14);
  // float32: log(sigmoid(-200)) is -200, not -inf; log(sigmoid(200)) is 0
  expect_values(log_sigmoid(from_vector<float>({-200, -20, 0, 20, 200}, {5})), {5},
                {-200.0, -20.0, -0.6931471824645996, -2.06115369216775e-09, 0.0}, 1e-6);
}

TEST_CASE("hardshrink and softshrink keep the boundary at lambd in the zeroed band, lambd < 0 raises") {
  Tensor z = from_vector<double>({-0.5, -0.25, 0.5, 0.75}, {4});
  expect_values(hardshrink(z), {4}, {0, 0, 0, 0.75}, 0);
  expect_values(z.hardshrink(0.2), {4}, {-0.5, -0.25, 0.5, 0.75}, 0);
  expect_values(softshrink(z), {4}, {0, 0, 0, 0.25}, 0);
  std::string msg = error_text<ValueError>([&] { softshrink(z, -0.5); });
  CHECK(has(msg, "softshrink"));
  CHECK(has(msg, "lambd"));
  CHECK(has(msg, "lambda must be greater or equal to 0, but found to be -0.5."));
  Tensor out = zeros({4}, DType::Float64);
  CHECK(has(error_text<ValueError>([&] { softshrink_out(out, z, -1); }), "found to be -1."));
}

TEST_CASE("threshold on integers replaces values <= threshold") {
  Tensor t = threshold(from_vector<int64_t>({1, 2, 3, 4}, {4}), 2, -7);
  CHECK(t.dtype() == DType::Int64);
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{-7, -7, 3, 4});
}

TEST_CASE("glu halves dim, an odd size or a 0-d input raises") {
  Tensor x = from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  // dim 0 halves [2, 3] into rows a = [1, 2, 3], b = [4, 5, 6]: a * sigmoid(b)
  expect_values(glu(x, 0), {1, 3}, {1 / (1 + std::exp(-4.0)), 2 / (1 + std::exp(-5.0)), 3 / (1 + std::exp(-6.0))},
                1e-15);
  std::string msg = error_text<ShapeError>([&] { glu(x); });
  CHECK(has(msg, "Halving dimension must be even, but dimension 1 is size 3"));
  CHECK(has(error_text<ShapeError>([&] { glu(scalar_tensor(1.0)); }), "glu does not support scalars"));
}

TEST_CASE("prelu: one slope or one per channel, other counts and 2-d weights raise") {
  Tensor x = from_vector<double>({-1, 2, -3, 4, -5, 6}, {2, 3});
  Tensor w = from_vector<double>({0.1, 0.2, 0.3}, {3});
  expect_values(prelu(x, w), {2, 3}, {-0.1, 2, -0.9, 4, -1.0, 6}, 1e-15);
  expect_values(x.prelu(from_vector<double>({0.5}, {1})), {2, 3}, {-0.5, 2, -1.5, 4, -2.5, 6}, 1e-15);
  // a 4-d input: the slope broadcasts over dims 2 and 3
  Tensor x4 = full({1, 3, 2, 2}, -1.0, DType::Float64);
  expect_values(prelu(x4, w).sum({2, 3}), {1, 3}, {-0.4, -0.8, -1.2}, 1e-15);
  CHECK(has(error_text<ShapeError>([&] {
              prelu(x, from_vector<double>({0.1, 0.2}, {2}));
            }),
            "Found parameter numbers = 2 and channel size = 3."));
  CHECK(has(error_text<ShapeError>([&] {
              prelu(x, from_vector<double>({0.1, 0.2, 0.3}, {1, 3}));
            }),
            "Expected `weight` to be a scalar or 1D tensor, but got ndim = 2"));
  // the weight's gradient sums each channel's negative inputs
  Tensor wg = w.clone().requires_grad_(true);
  sum(prelu(x, wg)).backward();
  expect_values(wg.grad(), {3}, {-1, -5, -3}, 1e-15);  // PyTorch 1.13's
}

TEST_CASE("rrelu: eval uses the mean slope, training draws slopes in [lower, upper] and replays with the seed") {
  Tensor x = from_vector<double>({-1, 2, -3, 4, -5, 6, -7, 8}, {8});
  expect_values(rrelu(x), {8}, leaky_relu(x, (0.125 + 1.0 / 3) / 2).to_vector<double>(), 1e-15);
  Generator gen(42);
  Tensor xr = x.clone().requires_grad_(true);
  Tensor y = rrelu(xr, 0.1, 0.3, /*training=*/true, &gen);
  sum(y).backward();
  const std::vector<double> xs = x.to_vector<double>(), ys = y.to_vector<double>(), gs = xr.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("element " << i);
    if (xs[i] > 0) {
      CHECK(ys[i] == xs[i]);
      CHECK(gs[i] == 1);
    } else {
      CHECK(gs[i] >= 0.1);
      CHECK(gs[i] <= 0.3);
      CHECK(ys[i] == doctest::Approx(xs[i] * gs[i]));
    }
  }
  Generator again(42);
  CHECK(rrelu(x, 0.1, 0.3, true, &again).to_vector<double>() == ys);
  CHECK(has(error_text<ValueError>([&] { rrelu(x, 0.5, 0.1, true); }),
            "Lower bound should be less than or equal to the upper bound"));
}
