// cumsum (and its reverse), cumprod, logcumsumexp and nll_loss / cross_entropy on the device against the CPU (runs
// only where a CUDA device is present): the warp, block and column scan paths, dtypes, the
// loss's reductions, weights, ignored targets, out-of-range targets and a training step.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/_cumsum_reverse.h"
#include "kiln/gen/api/_logcumsumexp_reverse.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/cumprod.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/logcumsumexp.h"
#include "kiln/gen/api/nll_loss.h"

using namespace kiln;
using kiln::testing::close;

namespace {
const Device kDev("cuda:0");
}  // namespace

TEST_CASE("cuda cumsum: short rows, long rows and columns, forward and reverse, equal the CPU") {
  manual_seed(31);
  // [300, 37]: a warp per row; [600, 5000]: a block per row; [3, 10000] and [1, 200003]: rows
  // split into chunks over the SMs (three passes); dims 0 and 1 of [20, 30, 40]: columns.
  for (auto shape : {std::vector<int64_t>{300, 37}, std::vector<int64_t>{600, 5000}, std::vector<int64_t>{3, 10000},
                     std::vector<int64_t>{1, 200003}, std::vector<int64_t>{20, 30, 40}}) {
    Tensor x = randn(shape, TensorOptions(kFloat64));
    for (int64_t dim = 0; dim < x.dim(); ++dim) {
      CAPTURE(dim);
      CHECK(close(cumsum(x.to(kDev), dim).cpu(), cumsum(x, dim), 1e-10, 1e-10));
      CHECK(close(_cumsum_reverse(x.to(kDev), dim).cpu(), _cumsum_reverse(x, dim), 1e-10, 1e-10));
    }
  }
  Tensor f = randn({64, 513});
  CHECK(close(cumsum(f.to(kDev), 1).cpu(), cumsum(f, 1), 1e-4, 1e-4));
  Tensor h = randn({8, 100}).to(kFloat16);  // accumulates in float32, rounds each output
  CHECK(close(cumsum(h.to(kDev), 1).cpu(), cumsum(h, 1), 2e-3, 2e-2));
  Tensor n = randint(-1000, 1000, {2, 300001}, TensorOptions(kInt64));  // split rows, exact
  CHECK(close(cumsum(n.to(kDev), 1).cpu(), cumsum(n, 1), 0, 0));
  CHECK(close(_cumsum_reverse(n.to(kDev), 1).cpu(), _cumsum_reverse(n, 1), 0, 0));
  Tensor t = f.transpose(0, 1);  // strided input
  CHECK(close(cumsum(t.to(kDev), 0).cpu(), cumsum(t, 0), 1e-4, 1e-4));
}

TEST_CASE("cuda cumprod, logcumsumexp: every scan path equals the CPU (one engine, shared combine rules)") {
  manual_seed(37);
  for (auto shape : {std::vector<int64_t>{300, 37}, std::vector<int64_t>{600, 5000}, std::vector<int64_t>{3, 10000},
                     std::vector<int64_t>{20, 30, 40}}) {
    Tensor x = rand(shape, TensorOptions(kFloat64)) * 0.2 + 0.9;  // products stay finite
    for (int64_t dim = 0; dim < x.dim(); ++dim) {
      CAPTURE(dim);
      CHECK(close(cumprod(x.to(kDev), dim).cpu(), cumprod(x, dim), 1e-9, 1e-12));
      CHECK(close(logcumsumexp(x.to(kDev), dim).cpu(), logcumsumexp(x, dim), 1e-10, 1e-10));
      CHECK(close(_logcumsumexp_reverse(x.to(kDev), dim).cpu(), _logcumsumexp_reverse(x, dim), 1e-10, 1e-10));
    }
  }
  Tensor i = (arange(600, TensorOptions(kInt32)).reshape({20, 30}) % 3) - 1;  // int64 products, exact
  CHECK(close(cumprod(i.to(kDev), 1).cpu(), cumprod(i, 1), 0, 0));
  Tensor z = from_vector<float>({-INFINITY, -INFINITY, 0, INFINITY, 1, NAN, 2}, {7});
  CHECK(close(logcumsumexp(z.to(kDev), 0).cpu(), logcumsumexp(z, 0), 0, 0));
  Tensor out = empty({0}, TensorOptions(kFloat64, kDev));  // out= on the device
  cumprod_out(out, i.to(kDev), 1);
  CHECK(close(out.cpu(), cumprod(i, 1, kFloat64), 0, 0));
}

TEST_CASE("cuda cumsum: integers and bool accumulate in int64, dtype= casts first") {
  Tensor i = (arange(600, TensorOptions(kInt32)).reshape({20, 30}) % 11) - 5;
  Tensor gi = cumsum(i.to(kDev), 1);
  CHECK(gi.dtype() == kInt64);
  CHECK(close(gi.cpu(), cumsum(i, 1), 0, 0));
  CHECK(close(cumsum(i.to(kDev), 0, kFloat32).cpu(), cumsum(i, 0, kFloat32), 0, 0));
  Tensor b = from_vector<bool>({true, false, true, true}, {4});
  testing::expect_values(cumsum(b.to(kDev), 0).cpu(), {4}, {1, 1, 2, 3});
  Tensor c = randn({4, 5}, TensorOptions(kComplex64));
  Tensor complex_error = abs(cumsum(c.to(kDev), 1).cpu() - cumsum(c, 1));
  CHECK(amax(complex_error, {0, 1}).item().to_double() < 1e-5);
  CHECK(cumsum(empty({0, 3}, TensorOptions(kFloat32, kDev)), 0).sizes().equals({0, 3}));
  std::string msg = testing::error_text<IndexError>([&] { (void)cumsum(ones({2, 3}, TensorOptions(kFloat32, kDev)), 2); });
  CHECK(testing::has(msg, "cumsum"));
}

TEST_CASE("cuda nll_loss: none, mean and sum, class weights, ignored targets, spatial inputs") {
  manual_seed(32);
  for (DType d : {kFloat64, kFloat32, kFloat16, kBFloat16}) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const double r = d == kFloat64 ? 1e-12 : d == kFloat32 ? 1e-5 : 2e-2;
    Tensor logp = log_softmax(randn({64, 10}), 1).to(d);
    Tensor target = from_vector<int64_t>(std::vector<int64_t>(64, 0), {64});
    for (int64_t n = 0; n < 64; ++n) target.select(0, n).fill_((n * 7) % 10);
    target.select(0, 5).fill_(-100);  // ignored
    Tensor w = (rand({10}) + 0.5).to(d);
    for (int64_t reduction : {0, 1, 2}) {
      CAPTURE(reduction);
      CHECK(close(nll_loss(logp.to(kDev), target.to(kDev), Tensor(), reduction, -100).cpu(),
                  nll_loss(logp, target, Tensor(), reduction, -100), r, r));
      CHECK(close(nll_loss(logp.to(kDev), target.to(kDev), w.to(kDev), reduction, -100).cpu(),
                  nll_loss(logp, target, w, reduction, -100), r, r));
    }
  }
  Tensor x = randn({2, 5, 3, 4}, TensorOptions(kFloat64));  // [N, C, d1, d2]
  Tensor t = (arange(24, TensorOptions(kInt64)).reshape({2, 3, 4}) * 3) % 5;
  CHECK(close(nll_loss(x.to(kDev), t.to(kDev), Tensor(), 1, -100).cpu(), nll_loss(x, t, Tensor(), 1, -100), 1e-12, 0));
  Tensor all_ignored = full({4}, -100.0, TensorOptions(kInt64));  // mean over no weight: NaN, as PyTorch
  CHECK(std::isnan(nll_loss(randn({4, 3}).to(kDev), all_ignored.to(kDev), Tensor(), 1, -100).item().to_double()));
}

TEST_CASE("cuda nll_loss: a target out of range raises IndexError naming it") {
  Tensor logp = zeros({3, 4}, TensorOptions(kFloat32, kDev));
  Tensor target = from_vector<int64_t>({0, 4, 1}, {3}).to(kDev);
  std::string msg = testing::error_text<IndexError>([&] { (void)nll_loss(logp, target, Tensor(), 1, -100); });
  CHECK(testing::has(msg, "nll_loss"));
  CHECK(testing::has(msg, "Target 4 is out of bounds"));
  msg = testing::error_text<DeviceError>([&] { (void)nll_loss(logp, from_vector<int64_t>({0, 1, 2}, {3}), Tensor(), 1, -100); });
  CHECK(testing::has(msg, "target"));
}

TEST_CASE("cuda cross_entropy: loss and gradient of a linear classifier equal the CPU") {
  manual_seed(33);
  Tensor x = randn({32, 20}, TensorOptions(kFloat64));
  Tensor target = (arange(32, TensorOptions(kInt64)) * 5) % 7;
  Tensor w = (randn({7, 20}, TensorOptions(kFloat64)) * 0.1).requires_grad_();
  Tensor wd = w.detach().to(kDev).requires_grad_();
  Tensor loss = cross_entropy(linear(x, w), target);
  Tensor loss_d = cross_entropy(linear(x.to(kDev), wd), target.to(kDev));
  CHECK(close(loss_d.cpu(), loss.detach(), 1e-12, 0));
  loss.backward();
  loss_d.backward();
  CHECK(close(wd.grad().cpu(), w.grad(), 1e-10, 1e-12));
  Tensor smooth = cross_entropy(linear(x.to(kDev), wd.detach()), target.to(kDev), Tensor(), 1, -100, 0.1);
  CHECK(close(smooth.cpu(), cross_entropy(linear(x, w.detach()), target, Tensor(), 1, -100, 0.1), 1e-12, 0));
}
