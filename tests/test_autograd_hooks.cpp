// Hooks and the rest of the autograd API users reach for (issue 14, item 5): tensor gradient
// hooks, post-accumulate hooks, node pre/post hooks, backward(inputs=), InferenceMode and anomaly
// mode. Expected values are derived by hand with PyTorch's semantics.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/sqrt.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_close;
using kiln::testing::has;

namespace {


using D = std::vector<double>;
const double kInf = std::numeric_limits<double>::infinity();

Tensor values(const D& v) { return from_vector(v, {int64_t(v.size())}, TensorOptions(kFloat64)); }
Tensor leaf(const D& v) { return values(v).requires_grad_(); }


}  // namespace

TEST_CASE("hooks: a gradient hook on a leaf runs before accumulation, until removed") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  std::vector<D> seen;
  autograd::RemovableHandle h = x.register_hook([&](const Tensor& g) {
    seen.push_back(g.to_vector<double>());
    return g * 2;
  });
  (x * x).sum().backward();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == D{2.0, 4.0, 6.0});  // d(sum x^2)/dx = 2x, before the hook
  expect_close(x.grad(), {4.0, 8.0, 12.0});
  // The hook lives with the leaf, not with its accumulator: a second graph runs it too,
  // on the new gradient (3), not on .grad.
  (x * 3).sum().backward();
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == D{3.0, 3.0, 3.0});
  expect_close(x.grad(), {4.0 + 6.0, 8.0 + 6.0, 12.0 + 6.0});

  h.remove();
  h.remove();  // harmless
  x.set_grad(Tensor());
  (x * x).sum().backward();
  CHECK(seen.size() == 2);
  expect_close(x.grad(), {2.0, 4.0, 6.0});
}

TEST_CASE("hooks: a hook on a non-leaf replaces the gradient that flows on to the leaves") {
  // y = 3x, z = sum(y^2): dz/dy = 2y = [6, -12, 18], clipped to [-10, 10] -> [6, -10, 10];
  // dz/dx = 3 * that = [18, -30, 30] (unclipped it would be [18, -36, 54]).
  Tensor x = leaf({1.0, -2.0, 3.0});
  Tensor y = x * 3;
  y.register_hook([](const Tensor& g) { return g.clamp(-10.0, 10.0); });
  (y * y).sum().backward();
  expect_close(x.grad(), {18.0, -30.0, 30.0});
  CHECK(!y.grad().defined());  // hooks do not make a non-leaf keep its gradient

  // A replacement by another tensor altogether: z = sum(5a) + sum(a), the gradient of b = 5a
  // replaced by [100, 200]: dz/da = 5 * [100, 200] + 1.
  Tensor a = leaf({1.0, 2.0});
  Tensor b = a * 5;
  b.register_hook([](const Tensor&) { return values({100.0, 200.0}); });
  (b.sum() + a.sum()).backward();
  expect_close(a.grad(), {5 * 100.0 + 1.0, 5 * 200.0 + 1.0});
}

TEST_CASE("hooks: several hooks run in registration order, each on the previous one's result") {
  Tensor x = leaf({1.0, 2.0});
  std::vector<D> seen;
  x.register_hook([&](const Tensor& g) {
    seen.push_back(g.to_vector<double>());
    return g + 1;
  });
  x.register_hook([&](const Tensor& g) {
    seen.push_back(g.to_vector<double>());
    return g * 10;
  });
  (x * 3).sum().backward();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == D{3.0, 3.0});
  CHECK(seen[1] == D{4.0, 4.0});
  expect_close(x.grad(), {40.0, 40.0});  // (3 + 1) * 10, not 3 * 10 + 1

  // A hook may remove a later one while hooks run: that one no longer runs.
  Tensor w = leaf({1.0, 2.0});
  autograd::RemovableHandle later;
  w.register_hook([&](const Tensor& g) {
    later.remove();
    return g + 1;
  });
  later = w.register_hook([](const Tensor& g) { return g * 100; });
  (w * 3).sum().backward();
  expect_close(w.grad(), {4.0, 4.0});
}

TEST_CASE("hooks: a hook returning an undefined tensor or nothing keeps the gradient") {
  Tensor x = leaf({1.0, -1.0});
  D first, second;
  x.register_hook([&](const Tensor& g) {
    first = g.to_vector<double>();
    return Tensor();
  });
  x.register_hook([&](const Tensor& g) { second = g.to_vector<double>(); });  // returns void
  (x * x * x).sum().backward();                                               // 3x^2
  CHECK(first == D{3.0, 3.0});
  CHECK(second == D{3.0, 3.0});
  expect_close(x.grad(), {3.0, 3.0});
}

TEST_CASE("hooks: retain_grad sees the hooked gradient of a non-leaf") {
  // y = 2x, z = sum(y^2): dz/dy = 2y = [4, 8], hooked to 6y = [12, 24]; dz/dx = 2 * [12, 24].
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  y.retain_grad();  // before the hook: retain_grad still sees the hooked value, as PyTorch
  y.register_hook([](const Tensor& g) { return g * 3; });
  (y * y).sum().backward();
  expect_close(y.grad(), {12.0, 24.0});
  expect_close(x.grad(), {24.0, 48.0});
}

TEST_CASE("hooks: post-accumulate-grad hooks see the leaf with its updated .grad") {
  Tensor x = leaf({1.0, 2.0});
  std::vector<D> seen;
  autograd::RemovableHandle h = x.register_post_accumulate_grad_hook([&](Tensor& t) {
    CHECK(t.is_same(x));
    seen.push_back(t.grad().to_vector<double>());
  });
  (x * 3).sum().backward();
  (x * x).sum().backward();  // 2x = [2, 4] more
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == D{3.0, 3.0});
  CHECK(seen[1] == D{5.0, 7.0});

  // It may act on .grad: an optimizer step fused into backward, then zeroing the gradient.
  h.remove();
  x.set_grad(Tensor());
  x.register_post_accumulate_grad_hook([](Tensor& t) {
    NoGradGuard no_grad;
    t.sub_(t.grad() * 0.5);
    t.set_grad(Tensor());
  });
  (x * x).sum().backward();  // grad 2x = [2, 4]: x -= [1, 2]
  expect_close(x.detach(), {0.0, 0.0});
  CHECK(!x.grad().defined());
  CHECK(seen.size() == 2);  // the removed hook stayed quiet

  Tensor y = x * 2;
  std::string msg = error_text<AutogradError>([&] { y.register_post_accumulate_grad_hook([](Tensor&) {}); });
  CHECK(has(msg, "post accumulate grad hooks cannot be registered on non-leaf tensors"));
}

TEST_CASE("hooks: node pre-hooks see and replace the gradients a node receives") {
  // y = 2x, z = sum(y): y's node receives ones; the pre-hook makes it [5, 7]; x.grad = 2 * that.
  Tensor x = leaf({1.0, 2.0});
  Tensor y = x * 2;
  // A tensor hook on y runs before its node's pre-hooks (PyTorch: tensor pre-hooks first).
  y.register_hook([](const Tensor& g) { return g * 3; });
  std::vector<D> seen;
  autograd::RemovableHandle h = y.grad_fn()->register_prehook([&](const TensorBaseList& grads) {
    REQUIRE(grads.size() == 1);
    seen.push_back(Tensor(grads[0]).to_vector<double>());
    return TensorBaseList{values({5.0, 7.0})};
  });
  y.grad_fn()->register_prehook([](const TensorBaseList&) { return TensorBaseList{}; });  // keeps them
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == D{3.0, 3.0});
  expect_close(x.grad(), {10.0, 14.0});

  h.remove();
  x.set_grad(Tensor());
  y.sum().backward();
  CHECK(seen.size() == 1);
  expect_close(x.grad(), {6.0, 6.0});  // 2 * 3 * ones: only the tensor hook is left
}

TEST_CASE("hooks: node post-hooks see what a node returned and may replace it") {
  // y = x * w: MulBackward returns (g * w, g * x) for g = ones.
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  Tensor y = x * w;
  std::vector<D> inputs_seen, outputs_seen;
  autograd::RemovableHandle h =
      y.grad_fn()->register_hook([&](const TensorBaseList& grad_inputs, const TensorBaseList& grad_outputs) {
        REQUIRE(grad_inputs.size() == 2);
        REQUIRE(grad_outputs.size() == 1);
        for (const TensorBase& g : grad_inputs) inputs_seen.push_back(Tensor(g).to_vector<double>());
        outputs_seen.push_back(Tensor(grad_outputs[0]).to_vector<double>());
        return TensorBaseList{grad_inputs[0], zeros_like(Tensor(grad_inputs[1]))};  // no gradient for w
      });
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  REQUIRE(inputs_seen.size() == 2);
  CHECK(inputs_seen[0] == D{3.0, 4.0});
  CHECK(inputs_seen[1] == D{1.0, 2.0});
  CHECK(outputs_seen[0] == D{1.0, 1.0});
  expect_close(x.grad(), {3.0, 4.0});
  expect_close(w.grad(), {0.0, 0.0});

  h.remove();
  y.sum().backward();
  expect_close(x.grad(), {6.0, 8.0});
  expect_close(w.grad(), {1.0, 2.0});

  // A replacement list of the wrong length is refused.
  Tensor y2 = x * w;
  y2.grad_fn()->register_hook([](const TensorBaseList& gi, const TensorBaseList&) { return TensorBaseList{gi[0]}; });
  std::string msg = error_text<AutogradError>([&] { y2.sum().backward(); });
  CHECK(has(msg, "returned 1 gradients, expected 2"));
}

TEST_CASE("hooks: backward(inputs=) accumulates only into the listed tensors") {
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, 4.0});
  Tensor h = x * w;
  Tensor z = (h * h).sum();  // dz/dh = 2h = [6, 16]; dz/dx = 2h w = [18, 64]; dz/dw = 2h x = [6, 32]
  z.backward(Tensor(), /*retain_graph=*/true, /*create_graph=*/false, {x});
  expect_close(x.grad(), {18.0, 64.0});
  CHECK(!w.grad().defined());

  autograd::backward({z}, {}, /*retain_graph=*/true, /*create_graph=*/false, {w});
  expect_close(w.grad(), {6.0, 32.0});
  expect_close(x.grad(), {18.0, 64.0});  // untouched this time

  // A non-leaf: its .grad is set (it retains its gradient from now on, as PyTorch), the leaves
  // below it are left alone.
  x.set_grad(Tensor());
  w.set_grad(Tensor());
  z.backward(Tensor(), /*retain_graph=*/true, /*create_graph=*/false, {h});
  expect_close(h.grad(), {6.0, 16.0});
  CHECK(!x.grad().defined());
  CHECK(!w.grad().defined());

  // A non-leaf and a leaf below it; hooks on the listed leaf run.
  h.set_grad(Tensor());
  x.register_hook([](const Tensor& g) { return g * 2; });
  z.backward(Tensor(), /*retain_graph=*/false, /*create_graph=*/false, {h, x});
  expect_close(h.grad(), {6.0, 16.0});
  expect_close(x.grad(), {36.0, 128.0});
  CHECK(!w.grad().defined());

  Tensor c = values({1.0, 2.0});
  Tensor z2 = (x * w).sum();
  std::string msg = error_text<AutogradError>([&] { z2.backward(Tensor(), false, false, {c}); });
  CHECK(has(msg, "does not require grad"));
}

TEST_CASE("hooks: a leaf's hooks run on the gradient grad() returns for it") {
  // PyTorch 2's tensor pre-hooks on the accumulator: grad() captures the hooked gradient.
  Tensor x = leaf({1.0, 2.0});
  x.register_hook([](const Tensor& g) { return g * 2; });
  TensorList gs = autograd::grad({(x * x).sum()}, {x});
  expect_close(gs[0], {4.0, 8.0});
  CHECK(!x.grad().defined());
}

TEST_CASE("hooks: registering a hook on a tensor that does not require grad is an error") {
  Tensor c = values({1.0, 2.0});
  std::string msg = error_text<AutogradError>([&] { c.register_hook([](const Tensor& g) { return g; }); });
  CHECK(has(msg, "cannot register a hook on a tensor that doesn't require gradient"));
  msg = error_text<AutogradError>([&] { c.register_post_accumulate_grad_hook([](Tensor&) {}); });
  CHECK(has(msg, "cannot register a hook on a tensor that doesn't require gradient"));

  // A hook may not change the gradient's shape.
  Tensor x = leaf({1.0, 2.0});
  x.register_hook([](const Tensor&) { return values({1.0, 2.0, 3.0}); });
  msg = error_text<AutogradError>([&] { x.sum().backward(); });
  CHECK(has(msg, "has changed the size of gradient 0 (was [2], got [3])"));
  CHECK(!x.grad().defined());
}

TEST_CASE("inference mode: no graph, no version bumps, inference tensors") {
  CHECK(!InferenceMode::is_enabled());
  Tensor x = leaf({1.0, 2.0});
  Tensor normal = values({5.0, 6.0});
  Tensor y, t, view_in;
  {
    InferenceMode guard;
    CHECK(InferenceMode::is_enabled());
    CHECK(!GradMode::is_enabled());
    y = x * 2;
    t = zeros({2}, TensorOptions(kFloat64));
    t.add_(1.0);
    t.mul_(3.0);
    normal.add_(1.0);  // a normal tensor keeps counting (PyTorch: only inference tensors have none)
    view_in = normal.view({2, 1});
    {
      InferenceMode off(false);
      CHECK(!InferenceMode::is_enabled());
      CHECK(GradMode::is_enabled());
      CHECK(!zeros({1}).is_inference());
    }
    CHECK(InferenceMode::is_enabled());
    CHECK(!GradMode::is_enabled());
  }
  CHECK(!InferenceMode::is_enabled());
  CHECK(GradMode::is_enabled());

  expect_close(y, {2.0, 4.0});
  CHECK(!y.requires_grad());
  CHECK(!y.grad_fn());
  CHECK(y.impl()->autograd() == nullptr);
  CHECK(y.is_inference());
  expect_close(t, {3.0, 3.0});
  CHECK(t.is_inference());
  CHECK(t.version() == 0);
  CHECK(!x.is_inference());
  CHECK(!normal.is_inference());
  CHECK(!view_in.is_inference());  // a view of a normal tensor is normal
  CHECK(normal.version() == 1);
  CHECK(t.view({2, 1}).is_inference());  // a view of an inference tensor is one
  CHECK(t.detach().is_inference());

  // Outside the guard: an inference tensor may take part in recorded ops that do not save it,
  // never in one that saves it for backward.
  Tensor w = leaf({10.0, 20.0});
  (t + w).sum().backward();
  expect_close(w.grad(), {1.0, 1.0});
  std::string msg = error_text<AutogradError>([&] { (void)(t * w); });
  CHECK(has(msg, "Inference tensors cannot be saved for backward"));
  Tensor c = t.clone();  // the work-around: a normal tensor
  CHECK(!c.is_inference());
  w.set_grad(Tensor());
  (c * w).sum().backward();
  expect_close(w.grad(), {3.0, 3.0});
  msg = error_text<AutogradError>([&] { t.requires_grad_(); });
  CHECK(has(msg, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"));
}

TEST_CASE("anomaly mode: a node returning NaN or inf is named, off by default") {
  CHECK(!autograd::AnomalyMode::is_enabled());
  // d sqrt(x)/dx = 1 / (2 sqrt(x)): inf at 0.
  Tensor x = leaf({0.0, 1.0});
  sqrt(x).sum().backward();
  expect_close(x.grad(), {kInf, 0.5});
  x.set_grad(Tensor());
  {
    autograd::DetectAnomalyGuard guard;
    CHECK(autograd::AnomalyMode::is_enabled());
    std::string msg = error_text<AutogradError>([&] { sqrt(x).sum().backward(); });
    CHECK(has(msg, "Function 'SqrtBackward' returned inf values in its 0th output."));
    CHECK(!x.grad().defined());  // raised before anything reached the leaf

    Tensor n = leaf({-1.0});  // sqrt(-1) = nan, its gradient too
    msg = error_text<AutogradError>([&] { sqrt(n).sum().backward(); });
    CHECK(has(msg, "Function 'SqrtBackward' returned nan values in its 0th output."));

    // The index of the offending gradient: y = a * b returns (g * b, g * a) = (2, inf).
    Tensor a = leaf({kInf});
    Tensor b = leaf({2.0});
    msg = error_text<AutogradError>([&] { (a * b).sum().backward(); });
    CHECK(has(msg, "returned inf values in its 1th output."));
    CHECK(has(msg, "Mul"));

    // Finite gradients pass.
    Tensor ok = leaf({4.0});
    sqrt(ok).sum().backward();
    expect_close(ok.grad(), {0.25});
  }
  CHECK(!autograd::AnomalyMode::is_enabled());
  autograd::AnomalyMode::set_enabled(true);
  CHECK(autograd::AnomalyMode::is_enabled());
  autograd::AnomalyMode::set_enabled(false);
}
