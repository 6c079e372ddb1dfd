// Memory steadiness: a training loop must not grow. After each step every graph, saved
// tensor and temporary is freed, so the allocator's live bytes return to the same level.
#include <doctest/doctest.h>
#include "kiln/core.h"
#include <kiln/optim.h>
#include "test_helpers.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/relu.h"

using namespace kiln;

namespace {
int64_t live_bytes() { return cpu_allocator_stats().live_bytes; }

struct Mlp {
  Tensor w1, b1, w2, b2;
  explicit Mlp(Generator& g)
      : w1((rand({16, 8}, {}, &g) - 0.5).requires_grad_()), b1(zeros({16}).requires_grad_()),
        w2((rand({4, 16}, {}, &g) - 0.5).requires_grad_()), b2(zeros({4}).requires_grad_()) {}
  Tensor operator()(const Tensor& x) const { return linear(relu(linear(x, w1, b1)), w2, b2); }
  TensorList params() const { return {w1, b1, w2, b2}; }
};
}  // namespace

TEST_CASE("memory: the allocator reports live, peak and allocation counts") {
  AllocatorStats before = cpu_allocator_stats();
  int64_t peak_during = 0;
  {
    Tensor t = empty({1000}, DType::Float64);
    AllocatorStats during = cpu_allocator_stats();
    CHECK(during.live_bytes - before.live_bytes >= 8000);
    CHECK(during.allocations == before.allocations + 1);
    peak_during = during.peak_bytes;
    CHECK(peak_during >= during.live_bytes);
  }
  AllocatorStats after = cpu_allocator_stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.peak_bytes >= peak_during);
}

TEST_CASE("memory: 300 training steps return live memory to the same level after every step") {
  Generator g(7);
  Mlp model(g);
  Tensor x = rand({32, 8}, {}, &g);
  Tensor y = randint(0, 4, {32}, DType::Int64, &g);
  optim::Adam opt(model.params(), {/*lr=*/0.01});
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = cross_entropy(model(x), y);
    loss.backward();
    opt.step();
    return loss.item<double>();
  };
  double first_loss = step();  // the first step creates Adam's state and the gradients
  step();
  const int64_t level = live_bytes();
  int grown = 0;
  double loss = 0;
  for (int i = 0; i < 300; ++i) {
    loss = step();
    if (live_bytes() != level) ++grown;
  }
  CHECK(grown == 0);
  CHECK(live_bytes() == level);
  CHECK(loss < first_loss);  // it did train
}

TEST_CASE("memory: double backward (create_graph) loops are steady") {
  Tensor x = from_vector<double>({0.5, -1.0, 2.0}, {3}).requires_grad_();
  auto step = [&] {
    Tensor y = (x * x * x).sum();
    Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    Tensor gg = autograd::grad({g.sum()}, {x})[0];  // 6x
    return gg.to_vector<double>();
  };
  step();
  const int64_t level = live_bytes();
  for (int i = 0; i < 100; ++i) {
    std::vector<double> gg = step();
    REQUIRE(gg.size() == 3);
    CHECK(gg[0] == doctest::Approx(3.0));
    CHECK(live_bytes() == level);
  }
}

TEST_CASE("memory: retain_grad with create_graph frees the graph when the tensor goes away") {
  Tensor x = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  auto step = [&](bool read) {
    Tensor y = x.exp();  // ExpBackward's gradient graph re-attaches ExpBackward itself
    y.retain_grad();
    (y * y).sum().backward(Tensor(), /*retain_graph=*/false, /*create_graph=*/true);
    if (read) CHECK(y.grad().defined());
    x.set_grad(Tensor());
  };
  step(true);
  step(false);
  const int64_t level = live_bytes();
  for (int i = 0; i < 50; ++i) {
    step(i % 2 == 0);  // read or never read the retained gradient: both must free everything
    CHECK(live_bytes() == level);
  }
}
