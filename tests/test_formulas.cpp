// The derivative helpers of kiln/autograd/formulas.h on small inputs. Expected values are
// PyTorch 1.13's gradients of the matching forward op (float64), or derived by hand where
// the comment says so. A few cases differentiate a helper again (double backward).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>
#include "kiln/autograd/formulas.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/amin.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/logsumexp.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/pow.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/softmax.h"

using namespace kiln;

namespace {

using D = std::vector<double>;

Tensor f64(const D& values, IntArrayRef shape) { return from_vector(values, shape, TensorOptions(kFloat64)); }
Tensor f64(const D& values) { return f64(values, {int64_t(values.size())}); }
Tensor i64(const std::vector<int64_t>& values) { return from_vector(values, {int64_t(values.size())}); }

void check_values(const Tensor& t, const D& expected, IntArrayRef shape, double eps = 1e-9) {
  REQUIRE(t.defined());
  CHECK(t.sizes().vec() == shape.vec());
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (std::isinf(expected[i])) CHECK(got[i] == expected[i]);
    else CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
  }
}

}  // namespace

TEST_CASE("formulas: sum_backward and mean_backward spread the gradient") {
  // by hand: every input element gets its slice's gradient (mean: divided by the count)
  Tensor g = f64({1, 2});
  check_values(sum_backward(g, {2, 3}, OptIntList({1}), false), {1, 1, 1, 2, 2, 2}, {2, 3});
  check_values(sum_backward(f64({1, 2}, {2, 1}), {2, 3}, OptIntList({-1}), true), {1, 1, 1, 2, 2, 2}, {2, 3});
  check_values(sum_backward(f64({5}, {}), {2, 2}, std::nullopt, false), {5, 5, 5, 5}, {2, 2});
  check_values(sum_backward(f64({3, 4}), {2, 1, 2}, OptIntList({0, 1}), false), {3, 4, 3, 4}, {2, 1, 2});
  check_values(mean_backward(f64({3, 6, 9}), {2, 3}, OptIntList({0}), false), {1.5, 3, 4.5, 1.5, 3, 4.5}, {2, 3});
  check_values(mean_backward(f64({8}, {}), {2, 2}, std::nullopt, false), {2, 2, 2, 2}, {2, 2});
}

TEST_CASE("formulas: prod_backward, with and without zeros") {
  Tensor self = f64({1, 2, 3, 4, 0, 6}, {2, 3});
  Tensor result = prod(self, 1);
  // PyTorch: [[6, 3, 2], [0, 24, 0]]
  check_values(prod_backward(f64({1, 1}), self, result, 1, false), {6, 3, 2, 0, 24, 0}, {2, 3});
  check_values(prod_backward(f64({1, 2}, {2, 1}), self, prod(self, 1, true), 1, true), {6, 3, 2, 0, 48, 0}, {2, 3});
  // all elements, by hand: products of the others
  Tensor v = f64({2, 3, 4});
  check_values(prod_backward(f64({1}, {}), v, prod(v), std::nullopt, false), {12, 8, 6}, {3});
  Tensor z = f64({2, 0, 3});
  check_values(prod_backward(f64({2}, {}), z, prod(z), std::nullopt, false), {0, 12, 0}, {3});
  Tensor zz = f64({0, 2, 0});
  check_values(prod_backward(f64({1}, {}), zz, prod(zz), std::nullopt, false), {0, 0, 0}, {3});
}

TEST_CASE("formulas: prod_backward is differentiable where the input has zeros") {
  // PyTorch: d/dx sum(grad(prod(x))) for x = [2, 0, 3] is [3, 5, 2]
  Tensor x = f64({2, 0, 3}).requires_grad_();
  Tensor g = prod_backward(ones({}, TensorOptions(kFloat64)), x, prod(x), std::nullopt, false);
  check_values(g, {0, 6, 0}, {3});
  check_values(autograd::grad({g.sum()}, {x})[0], {3, 5, 2}, {3});
  // PyTorch: x = [[0, 2, 0, 5]], prod over dim 1, weights [1, 2, 3, 4] -> [[30, 0, 10, 0]]
  Tensor y = f64({0, 2, 0, 5}, {1, 4}).requires_grad_();
  Tensor gy = prod_backward(ones({1}, TensorOptions(kFloat64)), y, prod(y, 1), 1, false);
  check_values(gy, {0, 0, 0, 0}, {1, 4});
  check_values(autograd::grad({(gy * f64({1, 2, 3, 4}, {1, 4})).sum()}, {y})[0], {30, 0, 10, 0}, {1, 4});
}

TEST_CASE("formulas: amax_backward splits the gradient among ties") {
  Tensor self = f64({1, 3, 3, 2, 0, 1}, {2, 3});
  Tensor result = amax(self, {1});
  check_values(amax_backward(f64({1, 4}), self, result, {1}, false), {0, 0.5, 0.5, 4, 0, 0}, {2, 3});
  check_values(amax_backward(f64({1, 4}, {2, 1}), self, amax(self, {1}, true), {1}, true),
               {0, 0.5, 0.5, 4, 0, 0}, {2, 3});
  // max() of everything: dim {} means all
  check_values(amax_backward(f64({6}, {}), self, max(self), {}, false), {0, 3, 3, 0, 0, 0}, {2, 3});
  // amin uses the same helper
  check_values(amax_backward(f64({1}, {}), self, amin(self), {}, false), {0, 0, 0, 0, 1, 0}, {2, 3});
}

TEST_CASE("formulas: value_selecting_reduction_backward puts the gradient at the index") {
  Tensor self = f64({1, 5, 2, 7, 0, 7}, {2, 3});
  auto [values, indices] = max(self, 1);
  check_values(indices, {1, 0}, {2});  // first occurrence, as PyTorch
  check_values(value_selecting_reduction_backward(f64({10, 20}), 1, indices, {2, 3}, false), {0, 10, 0, 20, 0, 0},
               {2, 3});
  Tensor idx0 = i64({1, 0, 1});  // along dim 0, keepdim
  check_values(value_selecting_reduction_backward(f64({1, 2, 3}, {1, 3}), 0, idx0.reshape({1, 3}), {2, 3}, true),
               {0, 2, 0, 1, 0, 3}, {2, 3});
}

TEST_CASE("formulas: var_backward") {
  // PyTorch: var([1, 2, 4]).backward() -> [-4/3, -1/3, 5/3]
  Tensor x = f64({1, 2, 4});
  check_values(var_backward(f64({1}, {}), x, std::nullopt, std::nullopt, false), {-4.0 / 3, -1.0 / 3, 5.0 / 3}, {3});
  // PyTorch: var(x, [1], correction=0) with grad [1, 2] -> [[-0.5, 0.5], [-2, 2]]
  Tensor m = f64({1, 2, 3, 5}, {2, 2});
  check_values(var_backward(f64({1, 2}), m, OptIntList({1}), Scalar(0), false), {-0.5, 0.5, -2, 2}, {2, 2});
  // one element with correction 1: infinite variance, gradient sgn(x - mean) * inf = nan at 0
  Tensor one = f64({3});
  CHECK(std::isnan(var_backward(f64({1}, {}), one, std::nullopt, std::nullopt, false).item<double>()));
}

TEST_CASE("formulas: norm_backward for p = 2, 1, inf, general, zero norms give zero gradients") {
  // PyTorch values (float64).
  Tensor m = f64({3, 4, 0, 0}, {2, 2});
  check_values(norm_backward(f64({1, 1}, {2, 1}), m, Scalar(2), norm(m, 2, OptIntList({1}), true), OptIntList({1}), true),
               {0.6, 0.8, 0, 0}, {2, 2});
  Tensor v = f64({-2, 0, 3});
  check_values(norm_backward(f64({1}, {}), v, Scalar(1), norm(v, 1), std::nullopt, false), {-1, 0, 1}, {3});
  Tensor w = f64({1, -3, 3});
  double inf = std::numeric_limits<double>::infinity();
  check_values(norm_backward(f64({1}, {}), w, Scalar(inf), norm(w, inf), std::nullopt, false), {0, -0.5, 0.5}, {3});
  Tensor a = f64({1, 2});
  check_values(norm_backward(f64({1}, {}), a, Scalar(3), norm(a, 3), std::nullopt, false),
               {0.2311204248, 0.9244816991}, {2});
  Tensor b = f64({0, 1, 4});
  check_values(norm_backward(f64({1}, {}), b, Scalar(0.5), norm(b, 0.5), std::nullopt, false), {0, 3, 1.5}, {3});
  Tensor c = f64({1, -2, 0, 0}, {2, 2});
  check_values(norm_backward(f64({1, 2}), c, Scalar(1.5), norm(c, 1.5, OptIntList({1})), OptIntList({1}), false),
               {0.6392340079, -0.9040134035, 0, 0}, {2, 2});
  check_values(norm_backward(f64({1}, {}), a, std::nullopt, norm(a), std::nullopt, false),
               {1 / std::sqrt(5.0), 2 / std::sqrt(5.0)}, {2});
}

TEST_CASE("formulas: logsumexp_backward") {
  // PyTorch: logsumexp([[0, 1, 2], [3, 3, 3]], [1]) with grad [1, 2]
  Tensor x = f64({0, 1, 2, 3, 3, 3}, {2, 3});
  check_values(logsumexp_backward(f64({1, 2}), x, logsumexp(x, {1}), {1}, false),
               {0.0900305732, 0.2447284711, 0.6652409558, 2.0 / 3, 2.0 / 3, 2.0 / 3}, {2, 3});
}

TEST_CASE("formulas: softmax and log_softmax backward") {
  Tensor x = f64({1, 2, 3});
  Tensor g = f64({1, 0, 0.5});
  // PyTorch: _softmax_backward_data / _log_softmax_backward_data
  check_values(softmax_backward_data(g, softmax(x, 0), 0), {0.0519790568, -0.1034347455, 0.0514556887}, {3});
  check_values(log_softmax_backward_data(g, log_softmax(x, 0), -1), {0.8649541402, -0.3670927066, -0.4978614337},
               {3});
  // Differentiable in the saved result: PyTorch gives [-1.9978614337, -0.8453021021, -1.0555583445]
  Tensor r = softmax(x, 0).requires_grad_();
  Tensor y = softmax_backward_data(g, r, 0);
  check_values(autograd::grad({(y * f64({1, 2, 3})).sum()}, {r})[0], {-1.9978614337, -0.8453021021, -1.0555583445},
               {3});
}

TEST_CASE("formulas: nll_loss_backward with weights, ignore_index and every reduction") {
  Tensor self = log_softmax(f64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}) / 5, 1);
  Tensor target = i64({1, -100, 3});
  Tensor weight = f64({1, 2, 3, 4});
  // PyTorch: nll_loss(self, target, weight, reduction=...)
  check_values(nll_loss_backward(f64({1}, {}), self, target, weight, 1, -100),
               {0, -1.0 / 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2.0 / 3}, {3, 4});
  check_values(nll_loss_backward(f64({1}, {}), self, target, weight, 2, -100), {0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0, -4},
               {3, 4});
  check_values(nll_loss_backward(f64({1, 2, 3}), self, target, weight, 0, -100),
               {0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0, -12}, {3, 4});
  // by hand: no weights, mean over the 2 counted samples
  check_values(nll_loss_backward(f64({1}, {}), self, target, Tensor(), 1, -100),
               {0, -0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, -0.5}, {3, 4});
  // every sample ignored: zero gradient, not NaN
  check_values(nll_loss_backward(f64({1}, {}), self, i64({2, 2, 2}), Tensor(), 1, 2), D(12, 0.0), {3, 4});
  // one sample of 3 classes, 0-d target
  Tensor one = f64({-1, -2, -3});
  check_values(nll_loss_backward(f64({2}, {}), one, i64({2}).reshape({}), Tensor(), 1, -100), {0, 0, -2}, {3});
}

TEST_CASE("formulas: clamp_backward") {
  // by hand (as PyTorch): the bounds themselves pass the gradient
  Tensor x = f64({-2, -1, 0, 1, 2});
  Tensor g = f64({1, 2, 3, 4, 5});
  check_values(clamp_backward(g, x, Scalar(-1), Scalar(1)), {0, 2, 3, 4, 0}, {5});
  check_values(clamp_backward(g, x, Scalar(0), std::nullopt), {0, 0, 3, 4, 5}, {5});
  check_values(clamp_backward(g, x, std::nullopt, Scalar(0.5)), {1, 2, 3, 0, 0}, {5});
  check_values(clamp_backward(g, x, std::nullopt, std::nullopt), {1, 2, 3, 4, 5}, {5});
}

TEST_CASE("formulas: pow backward helpers") {
  Tensor x = f64({1, 2, 3});
  Tensor g = f64({1, 1, 2});
  check_values(pow_backward(g, x, Scalar(3)), {3, 12, 54}, {3});
  check_values(pow_backward(g, x, Scalar(0)), {0, 0, 0}, {3});
  check_values(pow_backward(f64({1, 1}), f64({1, 4}), Scalar(0.5)), {0.5, 0.25}, {2});
  // PyTorch: d/dself of [2, 3] ** [0, 2] -> [0, 6]; the exponent's gradient was not asked for
  auto [self_only, no_exponent] = pow_backward(f64({1, 1}), f64({2, 3}), f64({0, 2}), f64({1, 9}), {true, false});
  check_values(self_only, {0, 6}, {2});
  CHECK_FALSE(no_exponent.defined());
  // PyTorch: d/dexponent of [0, 2, 0] ** [2, 3, -1] -> [0, 8 ln 2, -inf]
  Tensor base = f64({0, 2, 0});
  Tensor e = f64({2, 3, -1});
  double inf = std::numeric_limits<double>::infinity();
  auto [no_self, exponent_only] =
      pow_backward(ones({3}, TensorOptions(kFloat64)), base, e, pow(base, e), {false, true});
  CHECK_FALSE(no_self.defined());
  check_values(exponent_only, {0, 5.5451774445, -inf}, {3});
}

TEST_CASE("formulas: joint formulas of binary ops give each input's gradient, only when asked") {
  const Tensor a = f64({1, -2, 3});
  const Tensor b = f64({2, 4, 3});
  const Tensor g = f64({1, 2, -1});
  // div: d/da = g / b, d/db = -g a / b^2
  auto [div_a, div_b] = div_backward(g, a, b, {true, true});
  check_values(div_a, {0.5, 0.5, -1.0 / 3}, {3});
  check_values(div_b, {-0.25, 0.25, 1.0 / 3}, {3});
  auto [none_a, only_b] = div_backward(g, a, b, {false, true});
  CHECK_FALSE(none_a.defined());
  check_values(only_b, {-0.25, 0.25, 1.0 / 3}, {3});
  // atan2(a, b): d/da = g b / (a^2 + b^2), d/db = -g a / (a^2 + b^2)
  auto [atan2_a, atan2_b] = atan2_backward(g, a, b, {true, true});
  check_values(atan2_a, {0.4, 0.4, -1.0 / 6}, {3});
  check_values(atan2_b, {-0.2, 0.2, 1.0 / 6}, {3});
  // hypot: g a / r, g b / r
  const Tensor r = f64({std::sqrt(5.0), std::sqrt(20.0), std::sqrt(18.0)});
  auto [hypot_a, hypot_b] = hypot_backward(g, a, b, r, {true, false});
  check_values(hypot_a, {1 / std::sqrt(5.0), -4 / std::sqrt(20.0), -3 / std::sqrt(18.0)}, {3});
  CHECK_FALSE(hypot_b.defined());
  // maximum/minimum: the tie (3, 3) splits the gradient in half
  auto [max_a, max_b] = extremum_backward(g, a, b, /*is_max=*/true, {true, true});
  check_values(max_a, {0, 0, -0.5}, {3});
  check_values(max_b, {1, 2, -0.5}, {3});
  auto [min_a, min_b] = extremum_backward(g, a, b, /*is_max=*/false, {true, true});
  check_values(min_a, {1, 2, -0.5}, {3});
  check_values(min_b, {0, 0, -0.5}, {3});
  // lerp(self, end, w): self gets g (1 - w), end gets g w
  auto [lerp_self, lerp_end] = lerp_backward(g, f64({0.25, 0.5, 1}), {true, true});
  check_values(lerp_self, {0.75, 1, 0}, {3});
  check_values(lerp_end, {0.25, 1, -1}, {3});
  // addcdiv(s, t1, t2, value=2): t1 gets 2 g / t2, t2 gets -2 g t1 / t2^2
  auto [t1_grad, t2_grad] = addcdiv_backward(g, a, b, Scalar(2), {true, true});
  check_values(t1_grad, {1, 1, -2.0 / 3}, {3});
  check_values(t2_grad, {-0.5, 0.5, 2.0 / 3}, {3});
  // mm: mat1 gets g @ mat2^T, mat2 gets mat1^T @ g
  const Tensor m1 = f64({1, 2, 3, 4}, {2, 2});
  const Tensor m2 = f64({1, 0, -1, 2}, {2, 2});
  auto [g1, g2] = mm_backward(ones({2, 2}, TensorOptions(kFloat64)), m1, m2, Scalar(1), {true, true});
  check_values(g1, {1, 1, 1, 1}, {2, 2});
  check_values(g2, {4, 4, 6, 6}, {2, 2});
}

TEST_CASE("formulas: permute_backward and cat_backward") {
  // input [2, 3, 4] permuted by [2, 0, 1] -> [4, 2, 3]; by hand: grad_in[j, k, i] = grad[i, j, k]
  Tensor g = arange(24, TensorOptions(kFloat64)).reshape({4, 2, 3});
  Tensor gi = permute_backward(g, {2, 0, 1});
  CHECK(gi.sizes().vec() == std::vector<int64_t>{2, 3, 4});
  CHECK(gi.select(0, 1).select(0, 2).select(0, 3).item<double>() == 23);  // 3*6 + 1*3 + 2
  CHECK(gi.select(0, 0).select(0, 1).select(0, 2).item<double>() == 13);  // 2*6 + 0*3 + 1
  check_values(permute_backward(f64({1, 2, 3, 4, 5, 6}, {3, 2}), {-1, 0}), {1, 3, 5, 2, 4, 6}, {2, 3});

  Tensor cg = arange(10, TensorOptions(kFloat64)).reshape({5, 2});
  TensorList parts = cat_backward(cg, {DimVector{2, 2}, DimVector{0}, DimVector{3, 2}}, 0);
  REQUIRE(parts.size() == 3);
  check_values(parts[0], {0, 1, 2, 3}, {2, 2});
  check_values(parts[1], {}, {0});
  check_values(parts[2], {4, 5, 6, 7, 8, 9}, {3, 2});
  TensorList cols = cat_backward(cg, {DimVector{5, 1}, DimVector{5, 1}}, -1);
  check_values(cols[1], {1, 3, 5, 7, 9}, {5, 1});
}
