// Threads: ops, random numbers and autograd used from several threads at once, on
// independent graphs over shared read-only inputs, must give exactly what one thread gives.
// Built under ThreadSanitizer in CI (build-tsan), where any data race fails the run.
#include <doctest/doctest.h>
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>
#include "kiln/core.h"
#include "test_helpers.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/linear.h"

using namespace kiln;

namespace {
constexpr int kThreads = 4;
constexpr int kIterations = 25;

// Everything one iteration of one worker computes: a random draw, a forward, a backward.
struct Outcome {
  std::vector<double> draw, loss, grad_w, grad_b;
  bool operator==(const Outcome& o) const {
    return draw == o.draw && loss == o.loss && grad_w == o.grad_w && grad_b == o.grad_b;
  }
};

// Worker `id`, iteration `it`: its own generator and parameters, the shared input `x`.
Outcome work(const Tensor& x, const Tensor& target, int id, int it) {
  Generator g(1000 * id + it);
  Outcome o;
  Tensor noise = randn({4}, DType::Float64, &g);
  o.draw = noise.to_vector<double>();
  Tensor w = (rand({3, 5}, DType::Float64, &g) - 0.5).requires_grad_();
  Tensor b = zeros({3}, DType::Float64).requires_grad_();
  Tensor h = linear(x, w, b).tanh();
  Tensor loss = cross_entropy(h * 2, target) + (w * w).sum() * 1e-3;
  loss.backward();
  o.loss = {loss.item<double>()};
  o.grad_w = w.grad().to_vector<double>();
  o.grad_b = b.grad().to_vector<double>();
  return o;
}

template <typename Fn>
void run_threads(int n, Fn fn) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(fn, t);
  for (auto& th : threads) th.join();
}
}  // namespace

TEST_CASE("threads: forward and backward on independent graphs match one thread") {
  Generator g(3);
  const Tensor x = rand({6, 5}, DType::Float64, &g);  // shared, read-only
  const Tensor target = tensor<int64_t>({0, 1, 2, 0, 1, 2});
  std::vector<std::vector<Outcome>> expected(kThreads, std::vector<Outcome>(kIterations));
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIterations; ++i) expected[t][i] = work(x, target, t, i);

  std::vector<std::vector<Outcome>> got(kThreads, std::vector<Outcome>(kIterations));
  run_threads(kThreads, [&](int t) {
    for (int i = 0; i < kIterations; ++i) got[t][i] = work(x, target, t, i);
  });
  int mismatches = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kIterations; ++i) mismatches += !(got[t][i] == expected[t][i]);
  CHECK(mismatches == 0);
  CHECK(x.version() == 0);  // nobody wrote to the shared input
}

TEST_CASE("threads: one shared generator hands every request its own numbers") {
  Generator shared(11);
  constexpr int kDraws = 50;
  std::vector<std::vector<float>> draws(kThreads);
  run_threads(kThreads, [&](int t) {
    for (int i = 0; i < kDraws; ++i) {
      std::vector<float> v = rand({8}, DType::Float32, &shared).to_vector<float>();
      draws[t].insert(draws[t].end(), v.begin(), v.end());
    }
  });
  // 8 float32 values are 2 Philox blocks per request: the stream advanced by exactly all of them.
  CHECK(shared.offset() == uint64_t(kThreads * kDraws * 8));
  // and together they are exactly the numbers one thread draws from the same seed, each once
  Generator single(11);
  std::vector<float> all = rand({kThreads * kDraws * 8}, DType::Float32, &single).to_vector<float>();
  std::vector<float> concurrent;
  for (auto& d : draws) concurrent.insert(concurrent.end(), d.begin(), d.end());
  std::sort(all.begin(), all.end());
  std::sort(concurrent.begin(), concurrent.end());
  CHECK(concurrent == all);
}

TEST_CASE("threads: the default generator and manual_seed are safe to share") {
  manual_seed(5);
  std::atomic<int> bad{0};
  run_threads(kThreads, [&](int) {
    for (int i = 0; i < 20; ++i) {
      Tensor u = rand({16});
      for (float v : u.to_vector<float>()) bad += !(v >= 0.0f && v < 1.0f);
    }
  });
  CHECK(bad == 0);
  CHECK(default_generator().offset() == uint64_t(kThreads * 20 * 16));
}

TEST_CASE("threads: a leaf shared by every thread accumulates every thread's gradient") {
  // Each thread builds its own graph from the shared leaf: the accumulator lookup and the
  // accumulation into .grad race unless they are synchronized.
  Tensor w = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  constexpr int kRounds = 40;
  run_threads(kThreads, [&](int t) {
    for (int i = 0; i < kRounds; ++i) (w * double(t + 1)).sum().backward();
  });
  // sum over threads of (t + 1) per round
  const double per_element = kRounds * (kThreads * (kThreads + 1) / 2);
  kiln::testing::expect_values(w.grad(), {3}, {per_element, per_element, per_element});
}

TEST_CASE("threads: grad mode is per thread") {
  std::atomic<int> recorded{0};
  run_threads(2, [&](int t) {
    Tensor x = ones({2}).requires_grad_();
    if (t == 0) {
      NoGradGuard no_grad;
      for (int i = 0; i < 50; ++i) recorded += (x * 2).requires_grad();
    } else {
      for (int i = 0; i < 50; ++i) recorded += (x * 2).requires_grad();
    }
  });
  CHECK(recorded == 50);  // only the recording thread's results require grad
}
