// _group_norm_fused and its backward on the device (runs only where a CUDA device is present),
// against the CPU kernel on shapes larger than the generated samples: blocks of many warps, more
// channels than threads, one-element groups, no weight or bias, and a rerun's identical bits.
#include <doctest/doctest.h>

#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/_group_norm_fused.h"
#include "kiln/gen/api/_group_norm_fused_backward.h"

using namespace kiln;
using kiln::testing::close;

namespace {
Tensor on_cuda(const Tensor& t) { return t.defined() ? t.cuda() : Tensor(); }
}  // namespace

TEST_CASE("fused group_norm: the CUDA kernels against the CPU's, forward and backward") {
  manual_seed(53);
  struct Case {
    int64_t N, C, HxW, group;
    bool affine;
  };
  const std::vector<Case> cases = {{4, 64, 3136, 32, true}, {3, 600, 1, 300, true}, {2, 6, 5, 6, false},
                                   {5, 8, 777, 1, true}};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double rtol = dt == DType::Float64 ? 1e-10 : 1e-4, atol = dt == DType::Float64 ? 1e-12 : 1e-4;
    for (const Case& c : cases) {
      INFO("N " << c.N << " C " << c.C << " HxW " << c.HxW << " group " << c.group << " " << dtype_name(dt));
      Tensor x = randn({c.N, c.C, c.HxW}, dt) * 3.0 + 1.0;
      Tensor w = c.affine ? randn({c.C}, dt) : Tensor(), b = c.affine ? randn({c.C}, dt) : Tensor();
      auto [y, mean, rstd] = _group_norm_fused(x, w, b, c.N, c.C, c.HxW, c.group, 1e-5);
      auto [gy, gmean, grstd] =
          _group_norm_fused(x.cuda(), on_cuda(w), on_cuda(b), c.N, c.C, c.HxW, c.group, 1e-5);
      CHECK(close(gy.cpu(), y, rtol, atol));
      CHECK(close(gmean.cpu(), mean, rtol, atol));
      CHECK(close(grstd.cpu(), rstd, rtol, atol));
      Tensor dy = randn({c.N, c.C, c.HxW}, dt);
      auto [dx, dw, db] = _group_norm_fused_backward(dy, x, mean, rstd, w, c.N, c.C, c.HxW, c.group);
      auto [gdx, gdw, gdb] = _group_norm_fused_backward(dy.cuda(), x.cuda(), mean.cuda(), rstd.cuda(), on_cuda(w),
                                                        c.N, c.C, c.HxW, c.group);
      CHECK(close(gdx.cpu(), dx, rtol, atol));
      CHECK(close(gdw.cpu(), dw, rtol, atol * double(c.N * c.HxW)));
      CHECK(close(gdb.cpu(), db, rtol, atol * double(c.N * c.HxW)));
      auto [gdx2, gdw2, gdb2] = _group_norm_fused_backward(dy.cuda(), x.cuda(), mean.cuda(), rstd.cuda(),
                                                           on_cuda(w), c.N, c.C, c.HxW, c.group);
      CHECK(gdx2.cpu().to_vector<double>() == gdx.cpu().to_vector<double>());
      CHECK(gdw2.cpu().to_vector<double>() == gdw.cpu().to_vector<double>());
    }
  }
}
