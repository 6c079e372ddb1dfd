// The fused attention's dropout on the device (runs only where a CUDA device is present): for one
// generator state the CUDA kernels drop the CPU's probabilities (kiln/common/attention_dropout.h),
// forward and backward, causal and masked.
#include <doctest/doctest.h>

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
