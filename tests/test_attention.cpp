// scaled_dot_product_attention beyond the generated tests: the fused blockwise kernel against the
// math composition (itself checked against PyTorch by the generated tests of _attention_scores)
// across several 64-row blocks, causal and masked, forward and gradients (plain and create_graph),
// fully masked rows, dropout, memory that grows as O(L * E) rather than O(L * S), and errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/cpu_memory.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_attention_scores.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/scaled_dot_product_attention.h"
#include "kiln/gen/api/softmax.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

Tensor math_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                      double scale) {
  return matmul(softmax(_attention_scores(q, k, mask, causal, scale), -1), v);
}

struct Case {
  std::vector<int64_t> q, k, v;
  bool causal;
  bool bool_mask, float_mask;
};

}  // namespace

TEST_CASE("scaled_dot_product_attention: the fused kernel matches the math over several blocks") {
  manual_seed(11);
  const std::vector<Case> cases = {
      {{2, 130, 16}, {2, 100, 16}, {2, 100, 8}, false, false, false},
      {{1, 3, 150, 8}, {1, 3, 150, 8}, {1, 3, 150, 12}, true, false, false},
      {{2, 2, 70, 4}, {2, 2, 129, 4}, {2, 2, 129, 5}, false, true, false},
      {{2, 2, 65, 4}, {2, 2, 66, 4}, {2, 2, 66, 4}, false, false, true},
  };
  for (const Case& c : cases) {
    INFO("query " << shape_str(c.q) << " causal " << c.causal);
    Tensor q = randn(c.q, DType::Float64).requires_grad_(true), k = randn(c.k, DType::Float64).requires_grad_(true),
           v = randn(c.v, DType::Float64).requires_grad_(true);
    const int64_t L = c.q[c.q.size() - 2], S = c.k[c.k.size() - 2];
    Tensor mask;
    if (c.bool_mask) mask = rand({2, 1, L, S}) > 0.2;  // broadcast over heads, never expanded
    if (c.float_mask) mask = randn({L, S}, DType::Float64);
    const double scale = 0.4;
    Tensor fused = scaled_dot_product_attention(q, k, v, mask, 0.0, c.causal, scale);
    Tensor math = math_attention(q, k, v, mask, c.causal, scale);
    expect_values(fused, math.sizes().vec(), math.to_vector<double>(), 1e-12);
    Tensor g = randn(math.sizes().vec(), DType::Float64);
    TensorList fused_grads = autograd::grad({fused}, {q, k, v}, {g});
    TensorList math_grads = autograd::grad({math}, {q, k, v}, {g});
    for (size_t i = 0; i < 3; ++i) {
      INFO("gradient " << i);
      expect_values(fused_grads[i], math_grads[i].sizes().vec(), math_grads[i].to_vector<double>(), 1e-11);
    }
  }
}

TEST_CASE("scaled_dot_product_attention: strided inputs are read in place and give the dense inputs' results") {
  // q, k, v as a transformer splits one fused projection [B, L, 3, H, E] into heads (row stride
  // 3 * H * E, batch strides of a permute), a key transposed twice, a value taking every other row,
  // and a value whose last dim has a step (the one layout copied first). grad_out is a transposed
  // view too. Each must give what its dense copy gives, forward and backward, causal or masked.
  manual_seed(12);
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 1e-5;
    const int64_t B = 3, L = 70, H = 2, E = 8;
    Tensor qkv = randn({B, L, 3, H, E}, dt).permute({2, 0, 3, 1, 4});  // [3, B, H, L, E]
    Tensor wide = randn({B, H, 2 * L, 2 * E}, dt);
    const std::vector<Tensor> qs = {qkv.select(0, 0), qkv.select(0, 0)};
    const std::vector<Tensor> ks = {qkv.select(0, 1), randn({B, H, E, L}, dt).transpose(-1, -2)};
    const std::vector<Tensor> vs = {wide.slice(2, 0, 2 * L, 2).slice(3, 0, E),
                                    wide.slice(2, 0, L).slice(3, 0, 2 * E, 2)};
    for (size_t i = 0; i < qs.size(); ++i)
      for (bool causal : {true, false}) {
        INFO(dtype_name(dt) << " case " << i << " causal " << causal);
        Tensor mask = causal ? Tensor() : rand({L, L}) > 0.3;
        Tensor q = qs[i].detach().requires_grad_(true), k = ks[i].detach().requires_grad_(true),
               v = vs[i].detach().requires_grad_(true);
        Tensor qd = q.detach().contiguous().requires_grad_(true), kd = k.detach().contiguous().requires_grad_(true),
               vd = v.detach().contiguous().requires_grad_(true);
        Tensor out = scaled_dot_product_attention(q, k, v, mask, 0.0, causal);
        Tensor dense = scaled_dot_product_attention(qd, kd, vd, mask, 0.0, causal);
        expect_values(out, dense.sizes().vec(), dense.to_vector<double>(), tol);
        Tensor g = randn({B, H, E, L}, dt).transpose(-1, -2);
        TensorList grads = autograd::grad({out}, {q, k, v}, {g});
        TensorList dense_grads = autograd::grad({dense}, {qd, kd, vd}, {g.contiguous()});
        for (size_t j = 0; j < 3; ++j) {
          INFO("gradient " << j);
          expect_values(grads[j], dense_grads[j].sizes().vec(), dense_grads[j].to_vector<double>(), tol);
        }
      }
  }
}

TEST_CASE("scaled_dot_product_attention: create_graph gradients equal the plain ones and differentiate again") {
  manual_seed(12);
  Tensor q = randn({2, 9, 3}, DType::Float64).requires_grad_(true), k = randn({2, 7, 3}, DType::Float64),
         v = randn({2, 7, 4}, DType::Float64);
  Tensor g = randn({2, 9, 4}, DType::Float64);
  Tensor plain = autograd::grad({scaled_dot_product_attention(q, k, v)}, {q}, {g})[0];
  Tensor graphed = autograd::grad({scaled_dot_product_attention(q, k, v)}, {q}, {g}, std::nullopt, true)[0];
  expect_values(graphed, {2, 9, 3}, plain.to_vector<double>(), 1e-12);
  CHECK(graphed.requires_grad());
  Tensor second = autograd::grad({graphed.sum()}, {q})[0];
  Tensor reference = autograd::grad(
      {autograd::grad({math_attention(q, k, v, Tensor(), false, 1 / std::sqrt(3.0))}, {q}, {g}, std::nullopt, true)[0]
           .sum()},
      {q})[0];
  expect_values(second, {2, 9, 3}, reference.to_vector<double>(), 1e-10);
}

TEST_CASE("scaled_dot_product_attention: a row that sees no key is NaN, as PyTorch's math path") {
  Tensor q = ones({1, 2, 2}), k = ones({1, 3, 2}), v = ones({1, 3, 2});
  Tensor mask = from_vector<bool>({true, false, true, false, false, false}, {2, 3});
  Tensor out = scaled_dot_product_attention(q, k, v, mask);
  std::vector<float> got = out.to_vector<float>();
  CHECK(got[0] == doctest::Approx(1.0f));
  CHECK(std::isnan(got[2]));
}

TEST_CASE("scaled_dot_product_attention: 16-bit inputs compute in float32 inside the kernel, rounded once") {
  manual_seed(12);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    INFO(dtype_name(dt));
    Tensor q = randn({2, 2, 70, 8}, dt).requires_grad_(true), k = randn({2, 2, 90, 8}, dt).requires_grad_(true),
           v = randn({2, 2, 90, 6}, dt).requires_grad_(true);
    const Tensor mask = randn({70, 90}, dt);  // additive, in the inputs' dtype
    Tensor out = scaled_dot_product_attention(q, k, v, mask);
    const Tensor q32 = q.detach().to(DType::Float32).requires_grad_(true),
                 k32 = k.detach().to(DType::Float32).requires_grad_(true),
                 v32 = v.detach().to(DType::Float32).requires_grad_(true);
    Tensor out32 = scaled_dot_product_attention(q32, k32, v32, mask.to(DType::Float32));
    CHECK(out.dtype() == dt);
    CHECK(kiln::testing::same_values(out, out32.to(dt)));
    // the backward reads the rounded output (delta = rowsum(dO * O)): within the dtype's rounding
    const Tensor g = randn(out.sizes().vec(), dt);
    TensorList grads = autograd::grad({out}, {q, k, v}, {g});
    TensorList grads32 = autograd::grad({out32}, {q32, k32, v32}, {g.to(DType::Float32)});
    const double tol = dt == DType::Float16 ? 4e-3 : 3e-2;
    for (size_t i = 0; i < 3; ++i) {
      CHECK(grads[i].dtype() == dt);
      const double scale = grads32[i].abs().max().item().to_double();
      const double err = (grads[i].to(DType::Float32) - grads32[i]).abs().max().item().to_double();
      CHECK(err <= tol * std::max(1.0, scale));
    }
  }
}

TEST_CASE("scaled_dot_product_attention: memory grows with L * E, not L * S") {
  // L = S = 2048, E = 64, float32: the scores alone would be 16 MiB; q, k, v and the output 512 KiB each
  Tensor q = randn({1, 2048, 64}), k = randn({1, 2048, 64}), v = randn({1, 2048, 64});
  cpu_allocator_reset_peak_stats();
  const int64_t before = cpu_allocator_stats().peak_bytes;
  Tensor out = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, true);
  const int64_t used = cpu_allocator_stats().peak_bytes - before;
  CHECK(used < 4 * 1024 * 1024);
  CHECK(out.sizes().vec() == std::vector<int64_t>{1, 2048, 64});
}

TEST_CASE("scaled_dot_product_attention: dropout draws from kiln's generator (replayable) and keeps the scale") {
  Tensor q = randn({2, 6, 4}), k = randn({2, 6, 4}), v = randn({2, 6, 4});
  manual_seed(5);
  Tensor a = scaled_dot_product_attention(q, k, v, Tensor(), 0.5);
  manual_seed(5);
  Tensor b = scaled_dot_product_attention(q, k, v, Tensor(), 0.5);
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  expect_values(scaled_dot_product_attention(q, k, v, Tensor(), 0.0), {2, 6, 4},
                math_attention(q, k, v, Tensor(), false, 0.5).to_vector<double>(), 1e-5);
}

TEST_CASE("scaled_dot_product_attention: errors name the argument") {
  Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  CHECK(has(error_text<ValueError>([&] { scaled_dot_product_attention(q, k, v, Tensor(), 1.5); }), "dropout_p"));
  CHECK(has(error_text<ValueError>([&] {
              scaled_dot_product_attention(q, k, v, ones({3, 5}), 0.0, true);
            }),
            "Explicit attn_mask should not be set when is_causal=True"));
  CHECK(has(error_text<ShapeError>([&] { scaled_dot_product_attention(q, zeros({2, 5, 3}), v); }), "key"));
  CHECK(has(error_text<ShapeError>([&] { scaled_dot_product_attention(q, k, zeros({2, 4, 6})); }), "value"));
  CHECK(has(error_text<ShapeError>([&] {
              scaled_dot_product_attention(q, k, v, ones({4, 5}));
            }),
            "does not broadcast"));
  CHECK(has(error_text<DTypeError>([&] { scaled_dot_product_attention(q, k.to(DType::Float64), v); }), "same dtype"));
}
