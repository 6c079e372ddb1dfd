// The autograd wiring of cuda::make_graphed_callable, proven on the host: the same
// make_replayed_function with a recorder that re-runs its body instead of capturing a graph.
// Expected gradients are derived by hand (loss = sum(x*w*y) + sum((x+y)*c)).
#include <doctest/doctest.h>

#include <functional>
#include <vector>
#include "runtime/src/autograd/replayed_function.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/argmax.h"

using namespace kiln;
using autograd::detail::ReplayedFunctionSpec;
using testing::error_text;
using testing::expect_values;
using testing::has;

namespace {

Tensor vec(std::vector<float> v) { return from_vector<float>(v, {int64_t(v.size())}); }

// Records by running the body; each replay runs it again (a graph replay would rewrite the
// same buffers without running host code).
struct RerunRecorder {
  int recordings = 0;
  autograd::detail::Recorder recorder() {
    return [this](const std::function<void()>& body) {
      ++recordings;
      body();
      return body;
    };
  }
};

// out0 = sum(x * w * y), out1 = x + y, out2 = argmax(x) (no gradient).
autograd::detail::TensorFunction three_outputs(const Tensor& w) {
  return [w](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * w * in[1]).sum(), in[0] + in[1], argmax(in[0])};
  };
}

struct Fixture {
  RerunRecorder forward, backward;
  Tensor w = vec({0.5f, 2, -1}).requires_grad_(true);
  Tensor c = vec({1, 10, 100});

  autograd::detail::TensorFunction make(std::vector<Tensor> samples, std::vector<Tensor> parameters,
                                        bool allow_unused = false) {
    ReplayedFunctionSpec spec;
    spec.op = "replayed";
    spec.fn = three_outputs(w);
    spec.static_inputs = std::move(samples);
    spec.parameters = std::move(parameters);
    spec.allow_unused_input = allow_unused;
    spec.record_forward = forward.recorder();
    spec.record_backward = backward.recorder();
    return autograd::detail::make_replayed_function(std::move(spec));
  }
  Tensor loss(const std::vector<Tensor>& out) const { return out[0] + (out[1] * c).sum(); }
};

Tensor sample(std::vector<float> v, bool requires_grad) {
  Tensor t = vec(v);
  if (requires_grad) t.requires_grad_(true);
  return t;
}

}  // namespace

TEST_CASE("replayed function: gradients reach inputs, upstream nodes and parameters, call after call") {
  Fixture f;
  auto fn = f.make({sample({9, 9, 9}, true), sample({9, 9, 9}, true)}, {f.w});
  CHECK(f.forward.recordings == 1);
  CHECK(f.backward.recordings == 1);

  Tensor a = vec({0.5f, 1, 1.5f}).requires_grad_(true);
  Tensor x = a * 2;  // a non-leaf input: its gradient passes on to a
  Tensor y = vec({1, -1, 2}).requires_grad_(true);
  std::vector<Tensor> out = fn({x, y});
  REQUIRE(out.size() == 3);
  expect_values(out[0], {}, {-9.5});  // 0.5 - 4 - 6
  expect_values(out[1], {3}, {2, 1, 5});
  CHECK(out[2].item<int64_t>() == 2);
  CHECK(out[0].requires_grad());
  CHECK_FALSE(out[2].requires_grad());
  f.loss(out).backward();
  expect_values(a.grad(), {3}, {3, 16, 196});    // 2 * (w*y + c)
  expect_values(y.grad(), {3}, {1.5, 14, 97});   // x*w + c
  expect_values(f.w.grad(), {3}, {1, -2, 6});    // x*y

  // A second call replays over the same buffers; the parameter's gradient accumulates.
  Tensor x2 = vec({2, 0, 1}).requires_grad_(true), y2 = vec({3, 1, -1}).requires_grad_(true);
  out = fn({x2, y2});
  expect_values(out[0], {}, {4});  // 3 + 0 + 1
  f.loss(out).backward();
  expect_values(x2.grad(), {3}, {2.5, 12, 101});
  expect_values(y2.grad(), {3}, {2, 10, 99});
  expect_values(f.w.grad(), {3}, {7, -2, 5});
  CHECK(f.forward.recordings == 1);  // replays never record again
  CHECK(f.backward.recordings == 1);
}

TEST_CASE("replayed function: an output without an incoming gradient counts as zero") {
  Fixture f;
  auto fn = f.make({sample({0, 0, 0}, true), sample({0, 0, 0}, false)}, {f.w});
  Tensor x = vec({1, 2, 3}).requires_grad_(true);
  std::vector<Tensor> out = fn({x, vec({1, -1, 2})});
  (out[1] * f.c).sum().backward();  // out0 unused
  expect_values(x.grad(), {3}, {1, 10, 100});
  expect_values(f.w.grad(), {3}, {0, 0, 0});
}

TEST_CASE("replayed function: without gradients it is a forward replay") {
  Fixture f;
  auto fn = f.make({sample({0, 0, 0}, false), sample({0, 0, 0}, false)}, {});
  CHECK(f.backward.recordings == 0);
  std::vector<Tensor> first = fn({vec({1, 2, 3}), vec({1, -1, 2})});
  expect_values(first[1], {3}, {2, 1, 5});
  CHECK_FALSE(first[1].requires_grad());
  std::vector<Tensor> second = fn({vec({0, 0, 1}), vec({1, 1, 1})});
  expect_values(second[1], {3}, {1, 1, 2});
  expect_values(first[1], {3}, {1, 1, 2});  // outputs alias the recorded buffers

  // Recorded with gradients, called with grad mode off: no history.
  Fixture g;
  auto with_grad = g.make({sample({0, 0, 0}, true), sample({0, 0, 0}, true)}, {g.w});
  NoGradGuard no_grad;
  std::vector<Tensor> out = with_grad({vec({1, 2, 3}).requires_grad_(true), vec({1, -1, 2})});
  CHECK_FALSE(out[0].requires_grad());
  expect_values(out[0], {}, {-9.5});
}

TEST_CASE("replayed function: a frozen parameter gets nothing, an unused one is named") {
  Fixture f;
  Tensor frozen = vec({1, 1, 1});
  auto fn = f.make({sample({0, 0, 0}, true), sample({0, 0, 0}, true)}, {frozen, f.w});
  Tensor x = vec({1, 2, 3}).requires_grad_(true);
  f.loss(fn({x, vec({1, -1, 2})})).backward();
  CHECK_FALSE(frozen.grad().defined());
  expect_values(f.w.grad(), {3}, {1, -2, 6});

  Fixture g;
  Tensor unused = vec({1, 1}).requires_grad_(true);
  std::string e = error_text<ValueError>([&] { (void)g.make({sample({0, 0, 0}, true), sample({0, 0, 0}, true)}, {g.w, unused}); });
  CHECK(has(e, "replayed"));
  CHECK(has(e, "parameter 1"));
  auto lenient = g.make({sample({0, 0, 0}, true), sample({0, 0, 0}, true)}, {g.w, unused}, /*allow_unused=*/true);
  g.loss(lenient({vec({1, 2, 3}), vec({1, -1, 2})})).backward();
  CHECK_FALSE(unused.grad().defined());

  ReplayedFunctionSpec spec;
  RerunRecorder fwd, bwd;
  spec.op = "replayed";
  spec.fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; };
  spec.static_inputs = {sample({1}, true), sample({1}, true)};
  spec.record_forward = fwd.recorder();
  spec.record_backward = bwd.recorder();
  e = error_text<ValueError>([&] { (void)autograd::detail::make_replayed_function(spec); });
  CHECK(has(e, "input 1"));
}

TEST_CASE("replayed function: misuse is refused by name, not answered with another call's gradients") {
  Fixture f;
  auto fn = f.make({sample({0, 0, 0}, true), sample({0, 0, 0}, false)}, {f.w});
  Tensor y = vec({1, -1, 2});
  std::string e = error_text<ValueError>([&] { (void)fn({vec({1, 2, 3})}); });
  CHECK(has(e, "replayed"));
  CHECK(has(e, "expected 2 inputs"));
  e = error_text<ValueError>([&] { (void)fn({vec({1, 2, 3}), vec({1, 2})}); });
  CHECK(has(e, "input 1"));
  CHECK(has(e, "[3]"));
  e = error_text<ValueError>([&] { (void)fn({vec({1, 2, 3}), y.to(kFloat64)}); });
  CHECK(has(e, "input 1"));
  e = error_text<ValueError>([&] { (void)fn({vec({1, 2, 3}), vec({1, -1, 2}).requires_grad_(true)}); });
  CHECK(has(e, "input 1 requires grad"));

  std::vector<Tensor> first = fn({vec({1, 2, 3}).requires_grad_(true), y});
  Tensor first_loss = first[0] + first[1].sum();  // saves no output values: only the node can tell
  std::vector<Tensor> second = fn({vec({2, 0, 1}).requires_grad_(true), y});
  e = error_text<AutogradError>([&] { first_loss.backward(); });
  CHECK(has(e, "call 1"));
  CHECK(has(e, "call 2"));

  Tensor second_loss = f.loss(second);
  second_loss.backward(Tensor(), /*retain_graph=*/true);
  e = error_text<AutogradError>([&] { second_loss.backward(); });
  CHECK(has(e, "already ran"));

  std::vector<Tensor> third = fn({vec({1, 2, 3}).requires_grad_(true), y});
  e = error_text<AutogradError>([&] {
    (void)autograd::grad({f.loss(third)}, {f.w}, {}, std::nullopt, /*create_graph=*/true);
  });
  CHECK(has(e, "cannot itself be differentiated"));
}
