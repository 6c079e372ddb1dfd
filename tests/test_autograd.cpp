// The autograd engine and Tensor's autograd methods: gradient values on small graphs,
// accumulation, retain_graph/create_graph, grad(), no-grad, detach and the errors PyTorch
// raises. Expected values are derived by hand (or with PyTorch 1.13 where noted).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/sin.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

using D = std::vector<double>;

Tensor leaf(const D& values, IntArrayRef shape) {
  return from_vector(values, shape, TensorOptions(kFloat64)).requires_grad_();
}
Tensor leaf(const D& values) { return leaf(values, {int64_t(values.size())}); }

void check_values(const Tensor& t, const D& expected, double eps = 1e-12) {
  REQUIRE(t.defined());
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
  }
}

}  // namespace

TEST_CASE("autograd: chain rule through a small graph") {
  // z = sum(sin(x) * x + exp(x) / 2): dz/dx = cos(x) x + sin(x) + exp(x) / 2
  Tensor x = leaf({0.5, -1.0, 2.0});
  Tensor z = (sin(x) * x + exp(x) / 2).sum();
  CHECK(!z.is_leaf());
  CHECK(z.requires_grad());
  z.backward();
  D expected;
  for (double v : {0.5, -1.0, 2.0}) expected.push_back(std::cos(v) * v + std::sin(v) + std::exp(v) / 2);
  check_values(x.grad(), expected);
  CHECK(x.grad().sizes().equals(x.sizes()));
  CHECK(!x.grad().requires_grad());
}

TEST_CASE("autograd: an input used twice gets both contributions (x * x)") {
  Tensor x = leaf({1.0, -2.0, 3.0});
  (x * x).sum().backward();
  check_values(x.grad(), {2.0, -4.0, 6.0});

  // Two paths of different length into one leaf: y = x * 3, z = y * x -> dz/dx = 6x
  Tensor w = leaf({0.5, 2.0});
  ((w * 3) * w).sum().backward();
  check_values(w.grad(), {3.0, 12.0});
}

TEST_CASE("autograd: gradients accumulate in .grad across backward calls") {
  Tensor x = leaf({1.0, 2.0});
  (x * 3).sum().backward();
  check_values(x.grad(), {3.0, 3.0});
  (x * x).sum().backward();
  check_values(x.grad(), {5.0, 7.0});
  x.set_grad(Tensor());
  CHECK(!x.grad().defined());
  (x * 2).sum().backward();
  check_values(x.grad(), {2.0, 2.0});
}

TEST_CASE("autograd: broadcast inputs get gradients summed to their shape") {
  Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = leaf({10, 20, 30});     // broadcast over rows
  Tensor c = leaf({2}, {1});         // broadcast everywhere
  ((a * b + c) * c).sum().backward();
  // d/da = b c; d/db = sum over rows of a c; d/dc = sum(a b + 2c)
  check_values(a.grad(), {20, 40, 60, 20, 40, 60});
  check_values(b.grad(), {10, 14, 18});
  CHECK(b.grad().sizes().equals(b.sizes()));
  check_values(c.grad(), {1 * 10 + 2 * 20 + 3 * 30 + 4 * 10 + 5 * 20 + 6 * 30 + 6 * 2 * 2.0});
  CHECK(c.grad().sizes().equals(c.sizes()));
}

TEST_CASE("autograd: sum_to undoes broadcasting") {
  Tensor g = from_vector(D{1, 2, 3, 4, 5, 6}, {2, 3}, TensorOptions(kFloat64));
  check_values(autograd::sum_to(g, {3}), {5, 7, 9});
  check_values(autograd::sum_to(g, {2, 1}), {6, 15});
  check_values(autograd::sum_to(g, {1, 3}), {5, 7, 9});
  check_values(autograd::sum_to(g, {}), {21});
  CHECK(autograd::sum_to(g, {}).dim() == 0);
  CHECK(autograd::sum_to(g, {2, 3}).is_same(g));
  CHECK_THROWS_AS(autograd::sum_to(g, {4}), ShapeError);
}

TEST_CASE("autograd: explicit grad_outputs for a non-scalar output") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor y = x * x;
  y.backward(from_vector(D{1.0, 0.5, -1.0}, {3}, TensorOptions(kFloat64)));
  check_values(x.grad(), {2.0, 2.0, -6.0});
}

TEST_CASE("autograd: backward on a leaf itself") {
  Tensor x = leaf({4.0}, {});
  x.backward();
  check_values(x.grad(), {1.0});
}

TEST_CASE("autograd: retain_graph allows a second backward, otherwise it is an error") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();  // frees the graph
  check_values(x.grad(), {4.0, 8.0});
  std::string msg = error_text<AutogradError>([&] { y.backward(); });
  CHECK(has(msg, "Trying to backward through the graph a second time"));
  CHECK(has(msg, "retain_graph=true"));
}

TEST_CASE("autograd: create_graph gives differentiable gradients (d2/dx2 x^3 = 6x)") {
  Tensor x = leaf({1.5, -2.0});
  Tensor y = (x * x * x).sum();
  TensorList g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  check_values(g[0], {3 * 1.5 * 1.5, 3 * 4.0});
  CHECK(g[0].requires_grad());
  TensorList g2 = autograd::grad({g[0].sum()}, {x});
  check_values(g2[0], {6 * 1.5, 6 * -2.0});
  CHECK(!g2[0].requires_grad());
  CHECK(!x.grad().defined());  // grad() does not touch .grad

  // The same through backward(create_graph=true): .grad keeps its graph.
  Tensor w = leaf({2.0});
  (w * w * w).sum().backward(Tensor(), false, /*create_graph=*/true);
  check_values(w.grad(), {12.0});
  REQUIRE(w.grad().requires_grad());
  Tensor gw = w.grad();
  w.set_grad(Tensor());
  gw.sum().backward();
  check_values(w.grad(), {12.0});
}

TEST_CASE("autograd: double backward through saved outputs (exp)") {
  // y = exp(x) saves its result; d2/dx2 sum(exp(x)) = exp(x)
  Tensor x = leaf({0.0, 1.0});
  TensorList g = autograd::grad({exp(x).sum()}, {x}, {}, std::nullopt, true);
  TensorList g2 = autograd::grad({g[0].sum()}, {x});
  check_values(g2[0], {1.0, std::exp(1.0)});
}

TEST_CASE("autograd: grad() with unused inputs") {
  Tensor x = leaf({1.0, 2.0});
  Tensor unused = leaf({5.0});
  Tensor y = (x * 2).sum();
  std::string msg = error_text<AutogradError>([&] { autograd::grad({y}, {x, unused}, {}, true); });
  CHECK(has(msg, "appears to not have been used in the graph"));
  TensorList g = autograd::grad({y}, {x, unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  check_values(g[0], {2.0, 2.0});
  CHECK(!g[1].defined());
  CHECK(!x.grad().defined());
  CHECK(!unused.grad().defined());

  Tensor plain = from_vector(D{1.0}, {1}, TensorOptions(kFloat64));
  Tensor z = (x * 3).sum();
  CHECK(has(error_text<AutogradError>([&] { autograd::grad({z}, {plain}); }), "does not require grad"));
}

TEST_CASE("autograd: grad() w.r.t. a non-leaf, leaving other leaves alone") {
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  Tensor h = x * w;              // non-leaf input of grad()
  Tensor y = (h * h).sum();      // dy/dh = 2h
  TensorList g = autograd::grad({y}, {h, x});
  check_values(g[0], {6.0, 16.0});
  check_values(g[1], {18.0, 64.0});  // 2 h w
  CHECK(!x.grad().defined());
  CHECK(!w.grad().defined());
}

TEST_CASE("autograd: several roots in one backward") {
  Tensor x = leaf({1.0, 2.0});
  Tensor a = (x * x).sum();
  Tensor b = (x * 5).sum();
  autograd::backward({a, b});
  check_values(x.grad(), {7.0, 9.0});
}

TEST_CASE("autograd: NoGradGuard stops recording") {
  Tensor x = leaf({1.0, 2.0});
  {
    NoGradGuard guard;
    CHECK(!GradMode::is_enabled());
    Tensor y = x * 2;
    CHECK(!y.requires_grad());
    CHECK(!y.grad_fn());
    CHECK(!autograd::any_requires_grad({&x}));
    {
      EnableGradGuard enable;
      CHECK(GradMode::is_enabled());
      CHECK((x * 2).requires_grad());
    }
    CHECK(!GradMode::is_enabled());
  }
  CHECK(GradMode::is_enabled());
  CHECK(autograd::any_requires_grad({&x}));
}

TEST_CASE("autograd: detach shares storage and version, without history") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3;
  Tensor d = y.detach();
  CHECK(!d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.data_ptr() == y.data_ptr());
  uint32_t v = y.version();
  d.add_(1);
  CHECK(y.version() == v + 1);
  check_values(y, {4.0, 7.0});

  Tensor z = x * 2;
  z.detach_();
  CHECK(!z.requires_grad());
  CHECK(!z.grad_fn());
}

TEST_CASE("autograd: in-place change of a saved tensor is caught at backward") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  Tensor z = (y * y).sum();  // saves y at version 0
  y.add_(1);
  std::string msg = error_text<AutogradError>([&] { z.backward(); });
  CHECK(has(msg, "one of the variables needed for gradient computation has been modified by an inplace operation"));
  CHECK(has(msg, "is at version 1; expected version 0 instead"));
}

TEST_CASE("autograd: in-place ops on a leaf that requires grad are refused") {
  Tensor x = leaf({1.0, 2.0});
  std::string msg = error_text<AutogradError>([&] { x.add_(1); });
  CHECK(has(msg, "a leaf Variable that requires grad is being used in an in-place operation."));
  CHECK(has(error_text<AutogradError>([&] { autograd::check_inplace(x, "mul_"); }), "kiln::mul_"));
  {
    NoGradGuard guard;  // allowed without recording, as an optimizer step
    x.add_(1);
    autograd::check_inplace(x, "mul_");
  }
  check_values(x, {2.0, 3.0});
}

TEST_CASE("autograd: backward needs a scalar or a gradient, and a graph") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  std::string msg = error_text<AutogradError>([&] { (x * 2).backward(); });
  CHECK(has(msg, "grad can be implicitly created only for scalar outputs"));
  Tensor plain = from_vector(D{1.0}, {}, TensorOptions(kFloat64));
  msg = error_text<AutogradError>([&] { plain.backward(); });
  CHECK(has(msg, "element 0 of tensors does not require grad and does not have a grad_fn"));
  CHECK_THROWS_AS((x * 2).backward(from_vector(D{1.0, 2.0}, {2}, TensorOptions(kFloat64))), ShapeError);
}

TEST_CASE("autograd: requires_grad_ rules") {
  Tensor i = from_vector(std::vector<int64_t>{1, 2}, {2});
  std::string msg = error_text<AutogradError>([&] { i.requires_grad_(); });
  CHECK(has(msg, "only Tensors of floating point and complex dtype can require gradients"));
  Tensor x = leaf({1.0});
  Tensor y = x * 2;
  CHECK_THROWS_AS(y.requires_grad_(false), AutogradError);
  y.requires_grad_(true);  // a non-leaf already requires grad
  x.requires_grad_(false);
  CHECK(!x.requires_grad());
  CHECK(!(x * 2).requires_grad());
  // Integer results of a recorded op carry no history.
  Tensor a = leaf({1.0, 3.0, 2.0});
  Tensor idx = argmax(a * 1);
  CHECK(!idx.requires_grad());
}

TEST_CASE("autograd: retain_grad keeps a non-leaf's gradient") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 3;
  y.retain_grad();
  Tensor other = x * 4;  // not retained
  (y * y + other).sum().backward(Tensor(), /*retain_graph=*/true);
  check_values(y.grad(), {6.0, 12.0});
  check_values(x.grad(), {22.0, 40.0});
  CHECK(!other.grad().defined());
  // Accumulates like a leaf's .grad.
  Tensor z = (y * 2).sum();
  z.backward();
  check_values(y.grad(), {8.0, 14.0});
  CHECK_THROWS_AS(from_vector(D{1.0}, {1}, TensorOptions(kFloat64)).retain_grad(), AutogradError);
}

TEST_CASE("autograd: AccumulateGrad refuses a gradient of another shape") {
  Tensor x = leaf({1.0, 2.0});
  AccumulateGrad acc(x);
  TensorBaseList bad{from_vector(D{1.0, 2.0, 3.0}, {3}, TensorOptions(kFloat64))};
  CHECK_THROWS_AS(acc.apply(std::move(bad)), AutogradError);
  acc.apply(TensorBaseList{from_vector(D{0.5, 0.25}, {2}, TensorOptions(kFloat64))});
  check_values(x.grad(), {0.5, 0.25});
}

TEST_CASE("autograd: SavedVariable checks versions and release") {
  Tensor x = from_vector(D{1.0, 2.0}, {2}, TensorOptions(kFloat64));
  SavedVariable sv(x, false);
  CHECK(sv.unpack(NodeRef(), "TestBackward").is_same(x) == false);  // an alias, not the handle
  CHECK(sv.unpack(NodeRef(), "TestBackward").data_ptr() == x.data_ptr());
  x.bump_version();
  std::string msg = error_text<AutogradError>([&] { sv.unpack(NodeRef(), "TestBackward"); });
  CHECK(has(msg, "[TestBackward"));
  CHECK(has(msg, "is at version 1; expected version 0 instead"));
  SavedVariable released(x, false);
  released.reset();
  CHECK(has(error_text<AutogradError>([&] { released.unpack(NodeRef(), "TestBackward"); }),
                 "Trying to backward through the graph a second time"));
  SavedVariable none;
  CHECK(!none.unpack(NodeRef(), "TestBackward").defined());
  // A leaf that requires grad keeps its identity, so double backward reaches its .grad.
  Tensor w = leaf({3.0});
  CHECK(SavedVariable(w, false).unpack(NodeRef(), "TestBackward").is_same(w));
}

TEST_CASE("autograd: nodes run in reverse creation order and get one gradient per output") {
  Tensor x = leaf({2.0});
  Tensor y = x * 3;
  Tensor z = y * y;
  REQUIRE(y.grad_fn());
  REQUIRE(z.grad_fn());
  CHECK(z.grad_fn()->sequence_nr > y.grad_fn()->sequence_nr);
  CHECK(z.grad_fn()->next_edges.size() == 2);
  CHECK(z.grad_fn()->next_edges[0].fn == y.grad_fn());
  Edge e = autograd::gradient_edge(x);
  REQUIRE(e.valid());
  CHECK(std::string(e.fn->name()) == "AccumulateGrad");
  // Every use of a leaf shares one accumulator while a graph holds it.
  CHECK(autograd::gradient_edge(x).fn == e.fn);
  CHECK(y.grad_fn()->next_edges[0].fn == e.fn);
}

TEST_CASE("autograd: a long chain runs and is freed without deep recursion") {
  Tensor x = leaf({1.0});
  Tensor y = x;
  for (int i = 0; i < 20000; ++i) y = y * 1.0001;
  y.sum().backward();
  check_values(x.grad(), {std::pow(1.0001, 20000)}, 1e-9);
  y = Tensor();  // frees 20000 nodes iteratively
}

TEST_CASE("autograd: in-place ops on non-leaves rebase history") {
  // y = exp_(x * 2) in place: dy/dx = 2 exp(2x), with exp_'s saved output re-attached
  Tensor x = leaf({0.0, 0.5});
  Tensor y = x * 2;
  auto* before = y.grad_fn().get();
  y.exp_();
  CHECK(y.grad_fn().get() != before);
  y.sum().backward();
  check_values(x.grad(), {2.0, 2 * std::exp(1.0)});

  // a plain tensor becomes a non-leaf when an in-place op mixes in a tensor that requires grad
  Tensor w = leaf({3.0, 4.0});
  Tensor buf = from_vector(D{1.0, 2.0}, {2}, TensorOptions(kFloat64));
  buf.mul_(w);
  CHECK(!buf.is_leaf());
  (buf * buf).sum().backward();  // d/dw sum((b w)^2) = 2 b^2 w
  check_values(w.grad(), {6.0, 32.0});
}
