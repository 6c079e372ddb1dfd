// The fused attention on the device (runs only where a CUDA device is present): for one generator
// state the CUDA kernels drop the CPU's probabilities (kiln/common/attention_dropout.h), forward
// and backward, causal and masked; float16 and bfloat16 run the tensor-core flash kernels (and the
// float32 fallback past head size 128) and agree with the CPU's float32 computation from the same
// 16-bit inputs within the rounding of P and dS to 16 bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused_backward.h"

using namespace kiln;
using kiln::testing::close;

namespace {
const Device kCuda("cuda:0");

// got and want within tol of want's largest magnitude (and tol relative), compared in float64.
bool near(const Tensor& got, const Tensor& want, double tol) {
  const Tensor w = want.to(DType::Float64), g = got.cpu().to(DType::Float64);
  const Tensor finite = w.isfinite();
  const double scale = finite.any().item().to_int() != 0 ? w.masked_select(finite).abs().max().item().to_double() : 1.0;
  return close(g, w, tol, tol * std::max(1.0, scale));
}

Tensor on_cuda(const Tensor& t) { return t.defined() ? t.cuda() : Tensor(); }
}  // namespace

TEST_CASE("fused attention with dropout: CUDA draws and drops the CPU's mask, forward and backward") {
  manual_seed(31);
  struct Case {
    std::vector<int64_t> q, k, v;
    bool causal, masked;
  };
  const std::vector<Case> cases = {{{2, 3, 130, 16}, {2, 3, 101, 16}, {2, 3, 101, 8}, false, true},
                                   {{1, 4, 257, 32}, {1, 4, 257, 32}, {1, 4, 257, 32}, true, false}};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double rtol = dt == DType::Float64 ? 1e-10 : 1e-4, atol = dt == DType::Float64 ? 1e-12 : 1e-5;
    for (const Case& c : cases) {
      INFO("query " << shape_str(c.q) << " " << dtype_name(dt));
      Tensor q = randn(c.q, dt), k = randn(c.k, dt), v = randn(c.v, dt);
      Tensor mask = c.masked ? rand({c.q[2], c.k[2]}) > 0.3 : Tensor();
      const double p = 0.25, scale = 0.3;
      const int64_t seed = 987654321, offset = 4096;
      auto [out, lse] = _scaled_dot_product_attention_fused(q, k, v, mask, c.causal, scale, p, seed, offset);
      auto [dout, dlse] = _scaled_dot_product_attention_fused(q.cuda(), k.cuda(), v.cuda(),
                                                               mask.defined() ? mask.cuda() : Tensor(), c.causal,
                                                               scale, p, seed, offset);
      CHECK(close(dout.cpu(), out, rtol, atol));
      CHECK(close(dlse.cpu(), lse, rtol, atol));
      Tensor g = randn(out.sizes().vec(), dt);
      auto [gq, gk, gv] =
          _scaled_dot_product_attention_fused_backward(g, q, k, v, mask, out, lse, c.causal, scale, p, seed, offset);
      auto [cq, ck, cv] = _scaled_dot_product_attention_fused_backward(
          g.cuda(), q.cuda(), k.cuda(), v.cuda(), mask.defined() ? mask.cuda() : Tensor(), dout, dlse, c.causal, scale,
          p, seed, offset);
      CHECK(close(cq.cpu(), gq, rtol, atol));
      CHECK(close(ck.cpu(), gk, rtol, atol));
      CHECK(close(cv.cpu(), gv, rtol, atol));
    }
  }
}

TEST_CASE("fused attention in float16 and bfloat16: the flash kernels against the CPU, forward and backward") {
  manual_seed(47);
  struct Case {
    std::vector<int64_t> q, k, v;
    bool causal;
    int mask;  // 0 none, 1 bool, 2 additive in the inputs' dtype
    double p;
  };
  const std::vector<Case> cases = {
      {{2, 3, 130, 40}, {2, 3, 101, 40}, {2, 3, 101, 24}, false, 1, 0.1},    // partial tiles, E % 16 != 0, dropout
      {{1, 4, 257, 64}, {1, 4, 257, 64}, {1, 4, 257, 64}, true, 0, 0.0},     // causal, ragged last tile
      {{2, 2, 64, 128}, {2, 2, 192, 128}, {2, 2, 192, 128}, false, 2, 0.0},  // head size 128, whole tiles
      {{1, 2, 200, 32}, {1, 2, 200, 32}, {1, 2, 200, 16}, true, 0, 0.2},     // causal with dropout
      {{1, 2, 70, 160}, {1, 2, 90, 160}, {1, 2, 90, 144}, false, 0, 0.1}};   // past 128: float32 chunks
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    const double tol = dt == DType::Float16 ? 1e-2 : 6e-2;
    for (const Case& c : cases) {
      INFO("query " << shape_str(c.q) << " value " << shape_str(c.v) << " " << dtype_name(dt));
      Tensor q = randn(c.q, dt), k = randn(c.k, dt), v = randn(c.v, dt);
      Tensor mask;
      if (c.mask == 1) mask = rand({c.q[2], c.k[2]}) > 0.3;
      if (c.mask == 2) mask = randn({c.q[1], 1, c.k[2]}, dt);  // broadcast over batch and query rows
      const double scale = 1.0 / std::sqrt(double(c.q[3]));
      const int64_t seed = 1234567, offset = 8192;
      auto [out, lse] = _scaled_dot_product_attention_fused(q, k, v, mask, c.causal, scale, c.p, seed, offset);
      auto [gout, glse] = _scaled_dot_product_attention_fused(q.cuda(), k.cuda(), v.cuda(), on_cuda(mask), c.causal,
                                                               scale, c.p, seed, offset);
      CHECK(gout.dtype() == dt);
      CHECK(glse.dtype() == DType::Float32);
      CHECK(near(gout, out, tol));
      CHECK(near(glse, lse, 1e-3));
      Tensor g = randn(out.sizes().vec(), dt);
      auto [dq, dk, dv] =
          _scaled_dot_product_attention_fused_backward(g, q, k, v, mask, out, lse, c.causal, scale, c.p, seed, offset);
      auto [gq, gk, gv] = _scaled_dot_product_attention_fused_backward(g.cuda(), q.cuda(), k.cuda(), v.cuda(),
                                                                       on_cuda(mask), out.cuda(), lse.cuda(), c.causal,
                                                                       scale, c.p, seed, offset);
      CHECK(near(gq, dq, tol));
      CHECK(near(gk, dk, tol));
      CHECK(near(gv, dv, tol));
      // a rerun gives the same bits (no atomics)
      auto [gq2, gk2, gv2] = _scaled_dot_product_attention_fused_backward(g.cuda(), q.cuda(), k.cuda(), v.cuda(),
                                                                          on_cuda(mask), out.cuda(), lse.cuda(),
                                                                          c.causal, scale, c.p, seed, offset);
      CHECK(gq2.cpu().to_vector<double>() == gq.cpu().to_vector<double>());
      CHECK(gk2.cpu().to_vector<double>() == gk.cpu().to_vector<double>());
    }
  }
}

TEST_CASE("fused attention in float16: a query row with every key masked gives NaN and a logsumexp of -inf") {
  manual_seed(48);
  Tensor q = randn({1, 2, 20, 16}, DType::Float16), k = randn({1, 2, 30, 16}, DType::Float16),
         v = randn({1, 2, 30, 16}, DType::Float16);
  Tensor mask = rand({20, 30}) > 0.5;
  mask.select(0, 7).fill_(false);
  auto [out, lse] = _scaled_dot_product_attention_fused(q, k, v, mask, false, 0.25);
  auto [gout, glse] = _scaled_dot_product_attention_fused(q.cuda(), k.cuda(), v.cuda(), mask.cuda(), false, 0.25);
  CHECK(out.select(2, 7).isnan().all().item().to_int() != 0);
  CHECK(gout.cpu().select(2, 7).isnan().all().item().to_int() != 0);
  for (double x : glse.cpu().select(2, 7).to_vector<double>()) CHECK(x == -INFINITY);
  CHECK(near(gout, out, 1e-2));
}
