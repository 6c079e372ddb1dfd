// Dropout inside the fused attention (kiln/common/attention_dropout.h): the kernel drops exactly
// the probabilities dropout(softmax(scores), p) drops when drawn from the same generator state,
// so the fused result and its gradients (plain and create_graph) equal the composed math's, the
// generator advances as the math's would, a saved state replays the mask, and memory stays O(L * E).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/common/attention_dropout.h"
#include "kiln/core.h"
#include "kiln/cpu_memory.h"
#include "kiln/dropout_mask.h"
#include "kiln/random.h"
#include "support/gradcheck.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_attention_scores.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/api/dropout.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/scaled_dot_product_attention.h"
#include "kiln/gen/api/softmax.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

// The composed math with dropout, drawing from the default generator as the fused path does.
Tensor math_dropped(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal, double scale,
                    double p) {
  return matmul(dropout(softmax(_attention_scores(q, k, mask, causal, scale), -1), p, true), v);
}

bool same_state(const GeneratorState& a, const GeneratorState& b) { return a.seed == b.seed && a.offset == b.offset; }

}  // namespace

TEST_CASE("attention dropout: the kernel's draw is dropout's, kept below 1 - p and scaled by 1 / (1 - p)") {
  manual_seed(3);
  const GeneratorState start = default_generator().get_state();
  for (double p : {0.1, 0.5, 0.9}) {
    const attention::Dropout d = attention::Dropout::make(p, start.seed, start.offset);
    Generator replay;
    replay.set_state(start);
    const std::vector<int64_t> keep = dropout_keep_mask({1001}, p, kCPU, &replay).to(kInt64).to_vector<int64_t>();
    int64_t kept = 0;
    for (size_t n = 0; n < keep.size(); ++n) {
      const bool want = keep[n] != 0;
      CHECK(d.keep(n) == want);
      CHECK(d.factor<double>(n) == (want ? 1 / (1 - p) : 0.0));
      kept += want;
    }
    CHECK(std::fabs(double(kept) / double(keep.size()) - (1 - p)) < 0.06);
  }
  CHECK(attention::Dropout::make(0.0, 1, 0).factor<float>(7) == 1.0f);  // no dropout: every factor 1
  CHECK(attention::Dropout::make(1.0, 1, 0).factor<float>(7) == 0.0f);  // p == 1: nothing kept
}

TEST_CASE("attention dropout: fused output and gradients equal dropout(softmax) @ v from the same state") {
  struct Case {
    std::vector<int64_t> q, k, v;
    bool causal, bool_mask;
    double p;
  };
  // several 64-row blocks; rows whose length is not a multiple of 4 (draws straddle Philox blocks)
  const std::vector<Case> cases = {
      {{2, 130, 16}, {2, 101, 16}, {2, 101, 8}, false, false, 0.3},
      {{1, 3, 150, 8}, {1, 3, 150, 8}, {1, 3, 150, 12}, true, false, 0.5},
      {{2, 2, 70, 4}, {2, 2, 67, 4}, {2, 2, 67, 5}, false, true, 0.1},
  };
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
    for (const Case& c : cases) {
      INFO("query " << shape_str(c.q) << " causal " << c.causal << " " << dtype_name(dt));
      manual_seed(21);
      Tensor q = randn(c.q, dt).requires_grad_(true), k = randn(c.k, dt).requires_grad_(true),
             v = randn(c.v, dt).requires_grad_(true);
      Tensor mask;
      if (c.bool_mask) mask = rand({2, 1, c.q[2], c.k[2]}) > 0.2;
      const double scale = 0.4;
      const GeneratorState start = default_generator().get_state();
      Tensor fused = scaled_dot_product_attention(q, k, v, mask, c.p, c.causal, scale);
      const GeneratorState after_fused = default_generator().get_state();
      default_generator().set_state(start);
      Tensor math = math_dropped(q, k, v, mask, c.causal, scale, c.p);
      CHECK(same_state(default_generator().get_state(), after_fused));  // the same draw, the same advance
      expect_values(fused, math.sizes().vec(), math.to_vector<double>(), tol);
      Tensor g = randn(math.sizes().vec(), dt);
      TensorList fused_grads = autograd::grad({fused}, {q, k, v}, {g});
      TensorList math_grads = autograd::grad({math}, {q, k, v}, {g});
      for (size_t i = 0; i < 3; ++i) {
        INFO("gradient " << i);
        expect_values(fused_grads[i], math_grads[i].sizes().vec(), math_grads[i].to_vector<double>(), 5 * tol);
      }
    }
  }
}

TEST_CASE("attention dropout: a saved state replays the mask, p == 1 drops everything and draws nothing") {
  manual_seed(5);
  Tensor q = randn({2, 6, 4}), k = randn({2, 6, 4}), v = randn({2, 6, 4});
  const GeneratorState start = default_generator().get_state();
  Tensor a = scaled_dot_product_attention(q, k, v, Tensor(), 0.5);
  CHECK(default_generator().get_state().offset == start.offset + 2 * 6 * 6);  // 72 draws: 18 whole blocks
  default_generator().set_state(start);
  Tensor b = scaled_dot_product_attention(q, k, v, Tensor(), 0.5);
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  CHECK_FALSE(kiln::testing::same_values(a, scaled_dot_product_attention(q, k, v, Tensor(), 0.5)));

  Tensor qg = q.detach().requires_grad_(true);
  const GeneratorState before = default_generator().get_state();
  Tensor none = scaled_dot_product_attention(qg, k, v, Tensor(), 1.0);
  CHECK(same_state(default_generator().get_state(), before));
  expect_values(none, {2, 6, 4}, std::vector<double>(48, 0.0));
  expect_values(autograd::grad({none.sum()}, {qg})[0], {2, 6, 4}, std::vector<double>(48, 0.0));
}

TEST_CASE("attention dropout: create_graph gradients redraw the mask and differentiate again") {
  manual_seed(12);
  Tensor q = randn({2, 9, 3}, DType::Float64).requires_grad_(true), k = randn({2, 7, 3}, DType::Float64),
         v = randn({2, 7, 4}, DType::Float64);
  Tensor g = randn({2, 9, 4}, DType::Float64);
  const GeneratorState start = default_generator().get_state();
  Tensor plain = autograd::grad({scaled_dot_product_attention(q, k, v, Tensor(), 0.4)}, {q}, {g})[0];
  default_generator().set_state(start);
  Tensor graphed =
      autograd::grad({scaled_dot_product_attention(q, k, v, Tensor(), 0.4)}, {q}, {g}, std::nullopt, true)[0];
  expect_values(graphed, {2, 9, 3}, plain.to_vector<double>(), 1e-12);
  CHECK(graphed.requires_grad());
  Tensor second = autograd::grad({graphed.sum()}, {q})[0];
  default_generator().set_state(start);
  Tensor math = math_dropped(q, k, v, Tensor(), false, 1 / std::sqrt(3.0), 0.4);
  Tensor reference = autograd::grad({autograd::grad({math}, {q}, {g}, std::nullopt, true)[0].sum()}, {q})[0];
  expect_values(second, {2, 9, 3}, reference.to_vector<double>(), 1e-10);
}

TEST_CASE("attention dropout: the fused op with a fixed generator state passes gradcheck, causal and masked") {
  manual_seed(8);
  const TensorList x0 = {randn({2, 5, 3}, DType::Float64), randn({2, 6, 3}, DType::Float64),
                         randn({2, 6, 2}, DType::Float64)};
  const Tensor additive = randn({5, 6}, DType::Float64);
  for (int variant = 0; variant < 2; ++variant) {
    INFO("variant " << variant);
    const bool causal = variant == 0;
    kiln::testing::Fn f = [&](const TensorList& x) {
      return TensorList{std::get<0>(_scaled_dot_product_attention_fused(x[0], x[1], x[2], causal ? Tensor() : additive,
                                                                        causal, 0.6, 0.35, 1234, 40))};
    };
    size_t compared = 0;
    CHECK(kiln::testing::compare_jacobians(f, x0, {"query", "key", "value"}, kCPU, compared) == "");
    CHECK(kiln::testing::compare_jacobians(kiln::testing::vjp_fn(f, 3),
                                           {x0[0], x0[1], x0[2], randn({2, 5, 2}, DType::Float64)},
                                           {"query", "key", "value", "grad"}, kCPU, compared) == "");
    CHECK(compared > 0);
  }
}

TEST_CASE("attention dropout: memory grows with L * E, not L * S, as without dropout") {
  // L = S = 2048, E = 64, float32: the probabilities or the mask alone would be 16 MiB
  Tensor q = randn({1, 2048, 64}), k = randn({1, 2048, 64}), v = randn({1, 2048, 64});
  cpu_allocator_reset_peak_stats();
  const int64_t before = cpu_allocator_stats().peak_bytes;
  Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.1, true);
  CHECK(cpu_allocator_stats().peak_bytes - before < 4 * 1024 * 1024);
  CHECK(out.sizes().vec() == std::vector<int64_t>{1, 2048, 64});
}

TEST_CASE("attention dropout: bad dropout_p and philox_offset are typed errors naming the argument") {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  const GeneratorState before = default_generator().get_state();
  CHECK(has(error_text<ValueError>([&] { _scaled_dot_product_attention_fused(q, k, v, Tensor(), false, 1, -0.1); }),
            "dropout_p"));
  CHECK(has(error_text<ValueError>([&] { _scaled_dot_product_attention_fused(q, k, v, Tensor(), false, 1, NAN); }),
            "dropout_p"));
  CHECK(has(error_text<ValueError>([&] {
              _scaled_dot_product_attention_fused(q, k, v, Tensor(), false, 1, 0.5, 1, 6);
            }),
            "philox_offset"));
  // a call that fails its checks draws nothing
  CHECK(has(error_text<ShapeError>([&] { scaled_dot_product_attention(q, zeros({2, 5, 3}), v, Tensor(), 0.5); }),
            "key"));
  CHECK(same_state(default_generator().get_state(), before));
}
