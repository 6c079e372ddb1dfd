// Gradient checkpointing (issue 14, item 7): kiln::autograd::checkpoint recomputes a function's
// activations in backward instead of keeping them. Gradients must equal the plain run's bit for
// bit (the same ops run on the same values), random ops must draw the same numbers again, and
// the memory kept between forward and backward must shrink.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/tanh.h"

using namespace kiln;
using kiln::autograd::checkpoint;
using kiln::testing::error_text;
using kiln::testing::expect_close;
using kiln::testing::has;

namespace {


using D = std::vector<double>;

Tensor values(const D& v) { return from_vector(v, {int64_t(v.size())}, TensorOptions(kFloat64)); }
Tensor leaf(const D& v) { return values(v).requires_grad_(); }


// The CPU allocator's peak live bytes over a scope, relative to the live bytes at its start. The
// allocator keeps one all-time peak and cannot reset it: a balloon of (peak - live) bytes,
// allocated and never touched (so never backed by pages), lifts live bytes to the old peak, after
// which any new peak is this scope's.
class PeakMeter {
 public:
  PeakMeter() {
    AllocatorStats s = cpu_allocator_stats();
    if (s.peak_bytes > s.live_bytes) {
      balloon_bytes_ = size_t(s.peak_bytes - s.live_bytes);
      balloon_ = cpu_allocator()->allocate(balloon_bytes_);
    }
    s = cpu_allocator_stats();
    base_ = s.live_bytes;
    REQUIRE(s.peak_bytes == base_);
  }
  ~PeakMeter() {
    if (balloon_) cpu_allocator()->deallocate(balloon_, balloon_bytes_);
  }
  int64_t increase() const { return cpu_allocator_stats().peak_bytes - base_; }

 private:
  void* balloon_ = nullptr;
  size_t balloon_bytes_ = 0;
  int64_t base_ = 0;
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.to_vector<float>() == b.to_vector<float>();
}

}  // namespace

TEST_CASE("checkpoint: a deep chain's gradients equal the plain run's bit for bit, with far less memory") {
  // 30 layers x = tanh(x @ W_i), x [2048, 128] float32 (1 MiB per activation), W_i [128, 128].
  // The plain run keeps every layer's activation until backward; the checkpointed run, six
  // segments of five layers, keeps the segments' inputs and recomputes one segment at a time.
  constexpr int kLayers = 30, kSegment = 5;
  manual_seed(1234);
  std::vector<Tensor> weights;
  for (int i = 0; i < kLayers; ++i) weights.push_back((randn({128, 128}) * (1.0 / std::sqrt(128.0))).requires_grad_());
  Tensor x0 = randn({2048, 128}).requires_grad_();
  auto layers = [&](Tensor x, int from, int to) {
    for (int i = from; i < to; ++i) x = tanh(x.mm(weights[i]));
    return x;
  };
  auto clear_grads = [&] {
    x0.set_grad(Tensor());
    for (Tensor& w : weights) w.set_grad(Tensor());
  };

  int64_t plain_peak = 0, checkpointed_peak = 0;
  std::vector<Tensor> plain_grads;
  Tensor plain_out;
  {
    PeakMeter meter;
    Tensor y = layers(x0, 0, kLayers);
    y.sum().backward();
    plain_peak = meter.increase();
    plain_out = y.detach();
  }
  plain_grads.push_back(x0.grad());
  for (const Tensor& w : weights) plain_grads.push_back(w.grad());
  clear_grads();

  Tensor checkpointed_out;
  {
    PeakMeter meter;
    Tensor x = x0;
    for (int s = 0; s < kLayers / kSegment; ++s)
      x = checkpoint([&, s](const Tensor& in) { return layers(in, s * kSegment, (s + 1) * kSegment); }, x);
    REQUIRE(x.grad_fn());
    CHECK(std::string(x.grad_fn()->name()) == "CheckpointFunctionBackward");
    x.sum().backward();
    checkpointed_peak = meter.increase();
    checkpointed_out = x.detach();
  }
  CHECK(same_bits(checkpointed_out, plain_out));
  CHECK(same_bits(x0.grad(), plain_grads[0]));
  for (int i = 0; i < kLayers; ++i) {
    CAPTURE(i);
    CHECK(same_bits(weights[size_t(i)].grad(), plain_grads[size_t(i) + 1]));
  }
  MESSAGE("peak live bytes above the start: plain " << plain_peak << ", checkpointed " << checkpointed_peak << " ("
                                                    << 100.0 * double(checkpointed_peak) / double(plain_peak) << "%)");
  // Plain: 30 activations of 1 MiB (each tanh output, which the next mm saves too) and change.
  CHECK(plain_peak > 30 * (int64_t(1) << 20));
  CHECK(double(checkpointed_peak) < 0.6 * double(plain_peak));
  clear_grads();
}

TEST_CASE("checkpoint: random ops draw the same numbers again, and the stream goes on undisturbed") {
  // fn keeps each element with probability 1/2: d sum(c * fn(x))/dx = c * mask.
  auto fn = [](const Tensor& x) { return x * (rand_like(x) > 0.5); };
  Tensor c = randn({256}, TensorOptions(kFloat32));
  struct Run {
    Tensor out, grad, between, after;
  };
  // `between` is drawn after forward and before backward; `after` after backward.
  auto run = [&](bool checkpointed, bool preserve) {
    Tensor x = from_vector(std::vector<float>(256, 1.5f), {256}).requires_grad_();
    manual_seed(42);
    Tensor y = checkpointed ? checkpoint(fn, x, preserve) : fn(x);
    Run r;
    r.between = rand({8});
    (y * c).sum().backward();
    r.after = rand({8});
    r.out = y.detach();
    r.grad = x.grad();
    return r;
  };
  Run plain = run(false, true);
  Run kept = run(true, true);
  CHECK(same_bits(kept.out, plain.out));
  CHECK(same_bits(kept.grad, plain.grad));
  CHECK(same_bits(kept.between, plain.between));
  CHECK(same_bits(kept.after, plain.after));
  // The mask is not trivial: some elements kept, some dropped.
  std::vector<float> out = plain.out.to_vector<float>();
  int kept_count = 0;
  for (float v : out) kept_count += v != 0.0f;
  CHECK(kept_count > 64);
  CHECK(kept_count < 192);

  // Without preserve_rng_state the recomputation draws from wherever the stream is (here, after
  // `between`): another mask, another gradient than the forward's output implies.
  Run fresh = run(true, false);
  CHECK(same_bits(fresh.out, plain.out));
  CHECK(same_bits(fresh.between, plain.between));
  CHECK(!same_bits(fresh.grad, plain.grad));
}

TEST_CASE("checkpoint: inputs that do not require grad, or grad mode off, record nothing") {
  auto fn = [](const TensorList& in) { return TensorList{in[0] * in[1], in[0].argmax()}; };
  TensorList out = checkpoint(fn, {values({1.0, 2.0}), values({3.0, 4.0})});
  REQUIRE(out.size() == 2);
  expect_close(out[0], {3.0, 8.0});
  CHECK(!out[0].grad_fn());
  CHECK(!out[0].requires_grad());
  {
    NoGradGuard no_grad;
    TensorList off = checkpoint(fn, {leaf({1.0, 2.0}), values({3.0, 4.0})});
    CHECK(!off[0].grad_fn());
  }
}

TEST_CASE("checkpoint: several inputs and outputs, some not differentiable, through autograd::grad") {
  // out0 = x * w + k (k does not require grad), out1 = argmax (an integer output), out2 = x * x.
  // L = sum(out0 * [1, 2]) + sum(out2): dL/dx = w * [1, 2] + 2x, dL/dw = x * [1, 2].
  auto fn = [](const TensorList& in) {
    return TensorList{in[0] * in[1] + in[2], (in[0] * in[1]).argmax(), in[0] * in[0]};
  };
  Tensor x = leaf({1.0, 2.0});
  Tensor w = leaf({3.0, -4.0});
  Tensor k = values({5.0, 6.0});
  TensorList out = checkpoint(fn, {x, w, k});
  REQUIRE(out.size() == 3);
  CHECK(out[0].grad_fn());
  CHECK(!out[1].grad_fn());
  CHECK(out[1].item<int64_t>() == 0);
  Tensor loss = (out[0] * values({1.0, 2.0})).sum() + out[2].sum();
  TensorList g = autograd::grad({loss}, {x, w});
  expect_close(g[0], {3.0 + 2.0, -8.0 + 4.0});
  expect_close(g[1], {1.0, 4.0});
  CHECK(!x.grad().defined());  // grad() does not touch .grad
}

TEST_CASE("checkpoint: double backward, nesting, and an input changed in place") {
  // y = x^3 checkpointed: dy/dx = 3x^2, d(sum 3x^2)/dx = 6x.
  Tensor x = leaf({1.0, 2.0, -3.0});
  Tensor y = checkpoint([](const Tensor& t) { return t * t * t; }, x);
  TensorList g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true);
  expect_close(g[0], {3.0, 12.0, 27.0});
  REQUIRE(g[0].requires_grad());
  TensorList gg = autograd::grad({g[0].sum()}, {x});
  expect_close(gg[0], {6.0, 12.0, -18.0});

  // A checkpoint inside a checkpoint, over a non-leaf input: d sum(exp(2 * 3a))/da = 6 exp(6a).
  Tensor a = leaf({0.0, 0.5});
  Tensor h = a * 3;
  Tensor z = checkpoint([](const Tensor& t) { return checkpoint([](const Tensor& u) { return u * 2; }, t).exp(); }, h);
  z.sum().backward();
  expect_close(a.grad(), {6.0, 6.0 * std::exp(3.0)});

  // The saved input changed in place after forward: backward refuses it.
  Tensor p = leaf({1.0, 2.0});
  Tensor q = p * 1;
  Tensor r = checkpoint([](const Tensor& t) { return t * t; }, q);
  q.mul_(2);
  CHECK(has(error_text<AutogradError>([&] { r.sum().backward(); }), "modified by an inplace operation"));
}
