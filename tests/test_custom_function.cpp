// Custom autograd functions (issue 14, item 6): kiln::autograd::Function<T> as libtorch's
// torch::autograd::Function<T>. Expected values are derived by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"

using namespace kiln;
using kiln::autograd::AutogradContext;
using kiln::autograd::Function;
using kiln::testing::error_text;
using kiln::testing::expect_close;
using kiln::testing::has;

namespace {


using D = std::vector<double>;

Tensor values(const D& v) { return from_vector(v, {int64_t(v.size())}, TensorOptions(kFloat64)); }
Tensor leaf(const D& v) { return values(v).requires_grad_(); }


// exp, saving its output: the saved output comes back with this node's history.
struct MyExp : Function<MyExp> {
  static const char* name() { return "MyExpBackward"; }
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor result = x.exp();
    ctx->save_for_backward({result});
    return result;
  }
  static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
    Tensor result = ctx->get_saved_variables()[0];
    return {grad_outputs[0] * result};
  }
};

// x^3 written with kiln ops in backward too, so it can be differentiated again.
struct Cube : Function<Cube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
    Tensor x = ctx->get_saved_variables()[0];
    return {grad_outputs[0] * 3 * x * x};
  }
};

// input @ weight^T + bias, bias optional.
struct Linear : Function<Linear> {
  static Tensor forward(AutogradContext* ctx, Tensor input, Tensor weight, std::optional<Tensor> bias) {
    ctx->save_for_backward({input, weight});
    Tensor out = input.mm(weight.t());
    return bias ? out + *bias : out;
  }
  static TensorList backward(AutogradContext* ctx, TensorList grad_outputs) {
    TensorList saved = ctx->get_saved_variables();
    const Tensor& g = grad_outputs[0];
    Tensor grad_bias = ctx->needs_input_grad(2) ? g.sum(0) : Tensor();
    return {g.mm(saved[1]), g.t().mm(saved[0]), grad_bias};
  }
};

// Two outputs, x * y and x + y; records what backward received.
struct MulAdd : Function<MulAdd> {
  static inline std::vector<bool> received_defined;
  static TensorList forward(AutogradContext* ctx, Tensor x, Tensor y, bool materialize) {
    ctx->save_for_backward({x, y});
    ctx->set_materialize_grads(materialize);
    return {x * y, x + y};
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    received_defined = {g[0].defined(), g[1].defined()};
    TensorList saved = ctx->get_saved_variables();
    Tensor gx, gy;
    if (g[0].defined()) {
      gx = g[0] * saved[1];
      gy = g[0] * saved[0];
    }
    if (g[1].defined()) {
      gx = gx.defined() ? gx + g[1] : g[1];
      gy = gy.defined() ? gy + g[1] : g[1];
    }
    return {gx, gy, Tensor()};
  }
};

// Scales by a double kept in saved_data; the non-tensor argument gets an undefined gradient.
struct Scale : Function<Scale> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double k, std::string tag) {
    ctx->saved_data["k"] = k;
    ctx->saved_data["tag"] = tag;
    return x * k;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    CHECK(ctx->saved_data["tag"].to_string() == "scale");
    return {g[0] * ctx->saved_data["k"].to_double(), Tensor(), Tensor()};
  }
};

// Multiplies x by k in place.
struct MulInPlace : Function<MulInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double k) {
    x.mul_(k);
    ctx->mark_dirty({x});
    ctx->saved_data["k"] = k;
    return x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    return {g[0] * ctx->saved_data["k"].to_double(), Tensor()};
  }
};

// Writes 7 into x's first element through its data pointer, which no version counter sees.
struct SetFirst : Function<SetFirst> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    static_cast<double*>(x.data_ptr())[0] = 7.0;
    ctx->mark_dirty({x});
    return x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    Tensor mask = values({0.0, 1.0});
    return {g[0] * mask};
  }
};

// The maximum of a vector, its index and a float mask of where it is; only the value is differentiable.
struct MaxWithIndex : Function<MaxWithIndex> {
  static inline std::vector<bool> received_defined;
  static TensorList forward(AutogradContext* ctx, Tensor x) {
    Tensor index = x.argmax();
    Tensor value = x.max();
    Tensor mask = x.eq(value).to(x.dtype());
    ctx->mark_non_differentiable({index, mask});
    ctx->save_for_backward({mask});
    return {value, index, mask};
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    received_defined = {g[0].defined(), g[1].defined(), g[2].defined()};
    if (g[2].defined()) CHECK(g[2].to_vector<double>() == D{0.0, 0.0, 0.0});  // zeros, materialized
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

// Records needs_input_grad in forward and backward; arguments (x, k, y).
struct Probe : Function<Probe> {
  static inline std::vector<bool> in_forward, in_backward;
  static inline bool grad_mode_in_forward = true;
  static Tensor forward(AutogradContext* ctx, Tensor x, double k, Tensor y) {
    in_forward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    grad_mode_in_forward = GradMode::is_enabled();
    return x * k + y;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    in_backward = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    // A gradient for y, which does not require grad: ignored.
    return {g[0] * 2, Tensor(), g[0]};
  }
};

// Returns `count` gradients whatever its inputs.
struct WrongCount : Function<WrongCount> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor y, int64_t count) {
    ctx->saved_data["count"] = count;
    return x + y;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    return TensorList(size_t(ctx->saved_data["count"].to_int()), g[0]);
  }
};

// Returns a gradient of the wrong shape, or one for its non-tensor input.
struct BadGradient : Function<BadGradient> {
  static Tensor forward(AutogradContext* ctx, Tensor x, bool for_non_tensor) {
    ctx->saved_data["non_tensor"] = for_non_tensor;
    return x * 2;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    if (ctx->saved_data["non_tensor"].to_bool()) return {g[0] * 2, g[0]};
    return {values({1.0, 2.0}), Tensor()};
  }
};

}  // namespace

TEST_CASE("custom function: exp, cube and linear match the built-in ops' gradients") {
  // d exp(x)/dx = exp(x).
  Tensor x = leaf({0.0, 1.0, -1.0});
  Tensor y = MyExp::apply(x);
  REQUIRE(y.grad_fn());
  CHECK(std::string(y.grad_fn()->name()) == "MyExpBackward");
  expect_close(y, {1.0, std::exp(1.0), std::exp(-1.0)});
  y.sum().backward();
  expect_close(x.grad(), {1.0, std::exp(1.0), std::exp(-1.0)});
  Tensor x2 = leaf({0.0, 1.0, -1.0});
  x2.exp().sum().backward();
  expect_close(x.grad(), x2.grad().to_vector<double>());

  // d x^3/dx = 3x^2; the node is named after the type when it defines no name().
  Tensor c = leaf({1.0, 2.0, -3.0});
  Tensor cube = Cube::apply(c);
  CHECK(std::string(cube.grad_fn()->name()) == "Cube");
  cube.sum().backward();
  expect_close(c.grad(), {3.0, 12.0, 27.0});

  // x [[1, 2]], w [[3, 4], [5, 6]], b [7, 8]: y = x w^T + b = [[18, 25]]. With L = sum(y * [1, 2]):
  // dL/dx = [1, 2] w = [13, 16], dL/dw = [1, 2]^T x = [[1, 2], [2, 4]], dL/db = [1, 2].
  Tensor in = from_vector(D{1.0, 2.0}, {1, 2}, TensorOptions(kFloat64)).requires_grad_();
  Tensor w = from_vector(D{3.0, 4.0, 5.0, 6.0}, {2, 2}, TensorOptions(kFloat64)).requires_grad_();
  Tensor b = leaf({7.0, 8.0});
  Tensor out = Linear::apply(in, w, b);
  expect_close(out.reshape({2}), {18.0, 25.0});
  (out * values({1.0, 2.0})).sum().backward();
  expect_close(in.grad().reshape({2}), {13.0, 16.0});
  expect_close(w.grad().reshape({4}), {1.0, 2.0, 2.0, 4.0});
  expect_close(b.grad(), {1.0, 2.0});
  // Without a bias (an empty std::optional<Tensor> is a tensor input that gets no gradient).
  Tensor out2 = Linear::apply(in, w, std::optional<Tensor>());
  expect_close(out2.reshape({2}), {11.0, 17.0});
}

TEST_CASE("custom function: two outputs, with gradients materialized or not") {
  // a = x * y, b = x + y, L = sum(a) + 2 sum(b): dL/dx = y + 2, dL/dy = x + 2.
  Tensor x = leaf({1.0, 2.0});
  Tensor y = leaf({3.0, 4.0});
  TensorList out = MulAdd::apply(x, y, true);
  REQUIRE(out.size() == 2);
  CHECK(out[0].grad_fn() == out[1].grad_fn());
  CHECK(out[0].output_nr() == 0);
  CHECK(out[1].output_nr() == 1);
  (out[0].sum() + 2 * out[1].sum()).backward();
  expect_close(x.grad(), {5.0, 6.0});
  expect_close(y.grad(), {3.0, 4.0});

  // Only a = x * y used: b's gradient arrives as zeros (materialized) ...
  x.set_grad(Tensor());
  out = MulAdd::apply(x, y, true);
  out[0].sum().backward();
  CHECK(MulAdd::received_defined == std::vector<bool>{true, true});
  expect_close(x.grad(), {3.0, 4.0});
  // ... or undefined with set_materialize_grads(false).
  x.set_grad(Tensor());
  out = MulAdd::apply(x, y, false);
  out[0].sum().backward();
  CHECK(MulAdd::received_defined == std::vector<bool>{true, false});
  expect_close(x.grad(), {3.0, 4.0});
}

TEST_CASE("custom function: non-tensor arguments are forwarded and get no gradient") {
  Tensor x = leaf({1.0, -2.0});
  Tensor y = Scale::apply(x, 2.5, std::string("scale"));
  expect_close(y, {2.5, -5.0});
  y.sum().backward();
  expect_close(x.grad(), {2.5, 2.5});

  // A defined gradient for the non-tensor argument is an error, naming the function.
  Tensor z = BadGradient::apply(leaf({1.0, 2.0}), true);
  std::string msg = error_text<AutogradError>([&] { z.sum().backward(); });
  CHECK(has(msg, "BadGradient"));
  CHECK(has(msg, "not a Tensor"));
}

TEST_CASE("custom function: saved tensors are version-checked and freed after backward") {
  // A non-leaf saved by Cube, then changed in place: backward refuses it.
  Tensor x = leaf({1.0, 2.0});
  Tensor h = x * 1;
  Tensor y = Cube::apply(h);
  h.mul_(2);
  std::string msg = error_text<AutogradError>([&] { y.sum().backward(); });
  CHECK(has(msg, "modified by an inplace operation"));
  CHECK(has(msg, "Cube"));

  // A leaf changed under no-grad after it was saved: the same.
  Tensor l = leaf({1.0, 2.0});
  Tensor y2 = Cube::apply(l);
  {
    NoGradGuard no_grad;
    l.add_(1);
  }
  CHECK(has(error_text<AutogradError>([&] { y2.sum().backward(); }), "modified by an inplace operation"));

  // A second backward without retain_graph: the saved tensors are gone.
  Tensor a = leaf({1.0, 2.0});
  Tensor b = Cube::apply(a);
  b.sum().backward(Tensor(), /*retain_graph=*/true);
  b.sum().backward();
  expect_close(a.grad(), {6.0, 24.0});
  CHECK(has(error_text<AutogradError>([&] { b.sum().backward(); }), "backward through the graph a second time"));
}

TEST_CASE("custom function: mark_dirty moves an in-place input's history onto the node") {
  // b = a^2 (non-leaf), then b *= 3 in place by the custom function: c is b, and
  // d sum(3 a^2)/da = 6a.
  Tensor a = leaf({1.0, 2.0});
  Tensor b = a * a;
  const uint32_t version = b.version();
  Tensor c = MulInPlace::apply(b, 3.0);
  CHECK(c.is_same(b));
  CHECK(b.version() > version);
  REQUIRE(b.grad_fn());
  CHECK(std::string(b.grad_fn()->name()) == "MulInPlace");
  expect_close(b, {3.0, 12.0});
  c.sum().backward();
  expect_close(a.grad(), {6.0, 12.0});

  // The in-place change invalidates what an earlier op saved: exp saved its output e.
  Tensor p = leaf({0.0, 1.0});
  Tensor e = p.exp();
  MulInPlace::apply(e, 2.0);
  CHECK(has(error_text<AutogradError>([&] { e.sum().backward(); }), "modified by an inplace operation"));

  // A write forward made without an in-place op is counted by mark_dirty; element 0 is now
  // constant, so its gradient is 0.
  Tensor s = leaf({1.0, 2.0});
  Tensor t = s * 1;
  const uint32_t t_version = t.version();
  SetFirst::apply(t);
  CHECK(t.version() == t_version + 1);
  expect_close(t, {7.0, 2.0});
  (t * 5).sum().backward();
  expect_close(s.grad(), {0.0, 5.0});

  // A leaf that requires grad cannot be modified in place.
  Tensor q = leaf({1.0, 2.0});
  CHECK(has(error_text<AutogradError>([&] { MulInPlace::apply(q, 2.0); }), "leaf Variable that requires grad"));
  // Without recording it is allowed (and bumps the version).
  Tensor r = values({1.0, 2.0});
  Tensor r2 = MulInPlace::apply(r, 2.0);
  CHECK(!r2.grad_fn());
  expect_close(r, {2.0, 4.0});
}

TEST_CASE("custom function: mark_non_differentiable outputs get no history") {
  // max of [1, 5, 3] is 5 at index 1; d max/dx = [0, 1, 0].
  Tensor x = leaf({1.0, 5.0, 3.0});
  TensorList out = MaxWithIndex::apply(x);
  REQUIRE(out.size() == 3);
  const Tensor &value = out[0], &index = out[1], &mask = out[2];
  CHECK(value.grad_fn());
  CHECK(value.requires_grad());
  CHECK(!index.grad_fn());
  CHECK(!mask.grad_fn());
  CHECK(!mask.requires_grad());
  CHECK(index.item<int64_t>() == 1);
  expect_close(mask, {0.0, 1.0, 0.0});
  value.backward();
  expect_close(x.grad(), {0.0, 1.0, 0.0});
  // The non-differentiable outputs' gradients arrive as zeros.
  CHECK(MaxWithIndex::received_defined == std::vector<bool>{true, true, true});
}

TEST_CASE("custom function: needs_input_grad, grad mode in forward, nothing recorded without grad") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = values({10.0, 20.0});  // does not require grad
  Tensor out = Probe::apply(x, 3.0, y);
  CHECK(Probe::in_forward == std::vector<bool>{true, false, false});
  CHECK(!Probe::grad_mode_in_forward);
  CHECK(GradMode::is_enabled());
  expect_close(out, {13.0, 26.0});
  out.sum().backward();
  CHECK(Probe::in_backward == std::vector<bool>{true, false, false});
  expect_close(x.grad(), {2.0, 2.0});  // Probe's (deliberately not 3) gradient
  CHECK(!y.grad().defined());          // the gradient returned for y is ignored

  // No input requires grad, or grad mode is off: no node.
  Tensor none = Probe::apply(values({1.0}), 1.0, values({1.0}));
  CHECK(!none.grad_fn());
  CHECK(!none.requires_grad());
  {
    NoGradGuard no_grad;
    Tensor off = Probe::apply(x, 1.0, y);
    CHECK(!off.grad_fn());
    CHECK(Probe::in_forward == std::vector<bool>{false, false, false});
  }
}

TEST_CASE("custom function: a wrong number or shape of gradients raises") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = leaf({3.0, 4.0});
  // Two tensor inputs and one integer: three gradients expected.
  std::string msg = error_text<AutogradError>([&] { WrongCount::apply(x, y, int64_t(2)).sum().backward(); });
  CHECK(has(msg, "WrongCount"));
  CHECK(has(msg, "incorrect number of gradients (expected 3, got 2)"));
  CHECK(has(error_text<AutogradError>([&] { WrongCount::apply(x, y, int64_t(4)).sum().backward(); }),
            "expected 3, got 4"));

  Tensor z = BadGradient::apply(leaf({1.0, 2.0, 3.0}), false);
  msg = error_text<AutogradError>([&] { z.sum().backward(); });
  CHECK(has(msg, "BadGradient"));
  CHECK(has(msg, "invalid gradient at index 0"));
}

TEST_CASE("custom function: double backward through a backward written with kiln ops") {
  // y = x^3: dy/dx = 3x^2 = [3, 12, 27]; d(sum 3x^2)/dx = 6x = [6, 12, -18].
  Tensor x = leaf({1.0, 2.0, -3.0});
  Tensor y = Cube::apply(x);
  TensorList g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true);
  expect_close(g[0], {3.0, 12.0, 27.0});
  REQUIRE(g[0].requires_grad());
  TensorList gg = autograd::grad({g[0].sum()}, {x});
  expect_close(gg[0], {6.0, 12.0, -18.0});

  // Through a saved output too: d^2 exp(x)/dx^2 = exp(x).
  Tensor p = leaf({0.0, 1.0});
  Tensor e = MyExp::apply(p);
  TensorList ge = autograd::grad({e.sum()}, {p}, {}, std::nullopt, true);
  TensorList gge = autograd::grad({ge[0].sum()}, {p});
  expect_close(gge[0], {1.0, std::exp(1.0)});
}
