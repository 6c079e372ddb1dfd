// Hand-written CUDA kernels against the CPU (runs only where a CUDA device is present): cuBLAS
// products over layouts and dtypes, TF32, reductions with ties and NaNs, softmax on any dim.
// The generated `[cuda]` op tests compare the same ops with PyTorch's values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/addmm.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/argmin.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using kiln::testing::close;

namespace {
const Device kCuda("cuda:0");

}  // namespace

TEST_CASE("cuBLAS: mm, bmm, addmm and matmul over transposed, sliced and batched operands") {
  Tensor a = randn({33, 17}, TensorOptions(kFloat64)), b = randn({17, 9}, TensorOptions(kFloat64));
  Tensor da = a.cuda(), db = b.cuda();
  CHECK(close(mm(da, db).cpu(), mm(a, b), 1e-12, 1e-12));
  CHECK(close(mm(db.t(), da.t()).cpu(), mm(b.t(), a.t()), 1e-12, 1e-12));            // transposes, no copies
  CHECK(close(mm(da.slice(1, 2, 11), db.slice(0, 2, 11)).cpu(), mm(a.slice(1, 2, 11), b.slice(0, 2, 11)), 1e-12,
              1e-12));
  CHECK(close(mm(da.slice(1, 0, 17, 2), db.slice(0, 0, 17, 2)).cpu(),                   // no unit stride: one copy
              mm(a.slice(1, 0, 17, 2), b.slice(0, 0, 17, 2)), 1e-12, 1e-12));
  Tensor x = randn({4, 5, 6}, TensorOptions(kFloat64)), y = randn({4, 6, 3}, TensorOptions(kFloat64));
  CHECK(close(bmm(x.cuda(), y.cuda()).cpu(), bmm(x, y), 1e-12, 1e-12));
  CHECK(close(bmm(x.cuda(), y.cuda().transpose(1, 2).contiguous().transpose(1, 2)).cpu(), bmm(x, y), 1e-12, 1e-12));
  Tensor bias = randn({9}, TensorOptions(kFloat64));
  CHECK(close(addmm(bias.cuda(), da, db, 0.5, 2.0).cpu(), addmm(bias, a, b, 0.5, 2.0), 1e-12, 1e-12));
  Tensor v = randn({6}, TensorOptions(kFloat64));
  CHECK(close(matmul(x.cuda(), v.cuda()).cpu(), matmul(x, v), 1e-12, 1e-12));  // batched matrix @ vector
}

TEST_CASE("cuBLAS: float16 and bfloat16 accumulate in float32, TF32 is opt-in") {
  Tensor a = randn({64, 256}), b = randn({256, 32});
  Tensor want = mm(a, b);
  CHECK(close(mm(a.to(kFloat16).cuda(), b.to(kFloat16).cuda()).cpu().to(kFloat32), want, 2e-2, 5e-2));
  CHECK(close(mm(a.to(kBFloat16).cuda(), b.to(kBFloat16).cuda()).cpu().to(kFloat32), want, 5e-2, 2e-1));
  CHECK_FALSE(cuda::allow_tf32());
  CHECK(close(mm(a.cuda(), b.cuda()).cpu(), want, 1e-5, 1e-4));
  cuda::set_allow_tf32(true);
  CHECK(close(mm(a.cuda(), b.cuda()).cpu(), want, 1e-2, 5e-2));  // 10-bit mantissa inputs
  cuda::set_allow_tf32(false);
  // Complex products, no conjugation: equal to the CPU's.
  Tensor ca = randn({33, 17}, TensorOptions(kComplex64)), cb = randn({17, 9}, TensorOptions(kComplex64));
  CHECK(testing::max_abs_error(mm(ca.cuda(), cb.cuda()), mm(ca, cb)) < 1e-4);
  Tensor za = ca.to(kComplex128), zb = cb.to(kComplex128);
  CHECK(testing::max_abs_error(mm(za.cuda(), zb.cuda()), mm(za, zb)) < 1e-12);
  CHECK(testing::max_abs_error(mm(za.t().cuda(), za.cuda()), mm(za.t(), za)) < 1e-12);  // a transposed operand, no copy
  Tensor i = ones({2, 2}, TensorOptions(kInt64, kCuda));
  std::string msg = testing::error_text<DTypeError>([&] { (void)mm(i, i); });
  CHECK(testing::has(msg, "mm"));
  CHECK(testing::has(msg, "int64"));
}

TEST_CASE("reductions: sum, mean, amax over several dims and keepdim equal the CPU") {
  Tensor x = randn({5, 7, 300}, TensorOptions(kFloat64));
  Tensor d = x.cuda();
  CHECK(close(sum(d, {1}, true).cpu(), sum(x, {1}, true), 1e-12, 1e-12));
  CHECK(close(sum(d, {0, 2}).cpu(), sum(x, {0, 2}), 1e-12, 1e-12));
  CHECK(close(mean(d, {2}).cpu(), mean(x, {2}), 1e-12, 1e-12));
  CHECK(close(amax(d, {0, 1}).cpu(), amax(x, {0, 1}), 0, 0));
  CHECK(close(d.sum().cpu(), x.sum(), 1e-12, 1e-12));
  Tensor i = arange(1000, TensorOptions(kInt32)).reshape({10, 100});
  CHECK(close(sum(i.cuda(), {1}).cpu(), sum(i, {1}), 0, 0));  // int32 sums to int64
}

TEST_CASE("reductions: max/min with indices and argmax/argmin follow first-tie and NaN rules") {
  std::vector<float> v(1000, 0.0f);
  for (int i : {900, 37, 512}) v[size_t(i)] = 5.0f;
  Tensor t = from_vector<float>(v, {10, 100});
  auto [values, indices] = max(t.cuda(), 1, false);
  auto [cv, ci] = max(t, 1, false);
  CHECK(close(values.cpu(), cv, 0, 0));
  CHECK(close(indices.cpu(), ci, 0, 0));
  CHECK(argmax(t.cuda()).item().to_int() == 37);
  v[600] = std::numeric_limits<float>::quiet_NaN();
  Tensor n = from_vector<float>(v, {1000});
  CHECK(argmax(n.cuda()).item().to_int() == 600);
  CHECK(argmin(n.cuda()).item().to_int() == 600);
  CHECK(std::isnan(n.cuda().max().item().to_double()));
  CHECK(testing::has(testing::error_text<IndexError>([&] { (void)empty({0}, TensorOptions(kFloat32, kCuda)).max(); }),
                     "numel() == 0"));
}

TEST_CASE("softmax and log_softmax on the last and on other dims equal the CPU") {
  Tensor x = randn({4, 33, 70});
  for (int64_t dim : {2, 1, 0}) {
    CHECK(close(softmax(x.cuda(), dim).cpu(), softmax(x, dim), 1e-5, 1e-7));
    CHECK(close(log_softmax(x.cuda(), dim).cpu(), log_softmax(x, dim), 1e-5, 1e-6));
  }
  Tensor h = x.to(kFloat16);
  CHECK(close(softmax(h.cuda(), 2).cpu().to(kFloat32), softmax(h.to(kFloat32), 2), 1e-2, 1e-3));
}

TEST_CASE("softmax rows with infinities and NaN, and long rows, give the CPU's values") {
  // The device finds a row's max and sum in one pass; the CPU (PyTorch's arithmetic) in two.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // clang-format off
  Tensor x = from_vector<float>({1,    2,    3,    4,
                                 -inf, 0,    1,    -inf,
                                 -inf, -inf, -inf, -inf,
                                 inf,  1,    2,    3,
                                 1,    nan,  2,    3,
                                 inf,  inf,  0,    -inf,
                                 -inf, 5,    -inf, 5,
                                 -80,  0,    80,   -inf}, {8, 4});
  // clang-format on
  for (DType d : {kFloat32, kFloat64}) {
    Tensor xd = x.to(d);
    CHECK(close(softmax(xd.cuda(), 1).cpu(), softmax(xd, 1), 1e-6, 1e-7));
    CHECK(close(log_softmax(xd.cuda(), 1).cpu(), log_softmax(xd, 1), 1e-6, 1e-6));
  }
  Tensor rows = randn({37, 5001}) * 20;  // rows longer than a row group, odd lengths, big spread
  rows.select(0, 3).fill_(-inf);
  rows.select(1, 4).slice(0, 0, 2500).fill_(-inf);
  CHECK(close(softmax(rows.cuda(), 1).cpu(), softmax(rows, 1), 1e-5, 1e-7));
  CHECK(close(log_softmax(rows.cuda(), 1).cpu(), log_softmax(rows, 1), 1e-5, 1e-4));
}

TEST_CASE("a linear-relu-linear step with a squared error runs on the device and matches the CPU") {
  manual_seed(1);
  Tensor w1 = randn({16, 8}, TensorOptions(kFloat64)), w2 = randn({4, 16}, TensorOptions(kFloat64));
  Tensor b1 = randn({16}, TensorOptions(kFloat64));
  Tensor x = randn({32, 8}, TensorOptions(kFloat64)), y = randn({32, 4}, TensorOptions(kFloat64));
  auto step = [](Tensor w1v, Tensor b1v, Tensor w2v, const Tensor& xv, const Tensor& yv) {
    w1v = w1v.clone().requires_grad_(true);
    w2v = w2v.clone().requires_grad_(true);
    Tensor loss = (linear(linear(xv, w1v, b1v).relu(), w2v) - yv).square().mean();
    loss.backward();
    return std::vector<Tensor>{loss.detach(), w1v.grad(), w2v.grad()};
  };
  std::vector<Tensor> cpu = step(w1, b1, w2, x, y);
  std::vector<Tensor> dev = step(w1.cuda(), b1.cuda(), w2.cuda(), x.cuda(), y.cuda());
  for (size_t i = 0; i < cpu.size(); ++i) CHECK(close(dev[i].cpu(), cpu[i], 1e-10, 1e-12));
}
