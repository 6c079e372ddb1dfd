// softmax, log_softmax and nll_loss kernels (kernels/cpu/softmax.cpp, loss.cpp): values along any
// dim, non-contiguous inputs, dtype=, 16-bit floats, infinities, reductions, ignore_index,
// class weights and PyTorch's errors. Expected values computed with PyTorch 1.13 or by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/nll_loss.h"
#include "kiln/gen/api/softmax.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

const float kInfF = std::numeric_limits<float>::infinity();

Tensor seq_tensor(std::vector<int64_t> shape, double scale, double shift) {
  std::vector<float> v(size_t(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(double(i) * scale + shift);
  return from_vector(v, shape);
}

Tensor y34() { return from_vector<float>({1, -2, 3.5f, 0, 4, 5, -6, 7.25f, -8, 9, 10, -11}, {3, 4}); }

const std::vector<double> kSoftmaxY1 = {0.07352854311466217,   0.003660770831629634,  0.8957610726356506,
                                        0.02704964019358158,   0.03388834744691849,   0.09211807698011398,
                                        1.5385286360469763e-06, 0.8739920258522034,   1.1134006605573177e-08,
                                        0.26894140243530273,   0.7310585379600525,    5.543295267251835e-10};
const std::vector<double> kSoftmaxY0 = {0.04742559418082237, 1.6401030734414235e-05, 0.001501181977801025,
                                        0.0007096704212017357, 0.952568531036377,  0.017985915765166283,
                                        1.1236622299293231e-07, 0.9992903470993042, 5.852783488080604e-06,
                                        0.9819976687431335, 0.9984986782073975, 1.1852702819226124e-08};

}  // namespace

TEST_CASE("softmax: last dim, other dims, negative dims, non-contiguous input") {
  Tensor y = y34();
  expect_values(softmax(y, 1), {3, 4}, kSoftmaxY1, 1e-5);
  expect_values(softmax(y, -1), {3, 4}, kSoftmaxY1, 1e-5);
  expect_values(softmax(y, 0), {3, 4}, kSoftmaxY0, 1e-5);
  // y.t() is [4, 3] with strides (1, 4): softmax over its rows = softmax of y over dim 0, transposed
  Tensor st = softmax(y.t(), 1);
  CHECK(st.sizes().vec() == std::vector<int64_t>{4, 3});
  expect_values(st.t(), {3, 4}, kSoftmaxY0, 1e-5);
  // a middle dim of a 3-D tensor (the strided "columns" path); rows differ by 0.4 along dim 1
  Tensor x = seq_tensor({2, 3, 4}, 0.1, -1);
  std::vector<double> e;
  for (int i = 0; i < 2; ++i)
    for (double v : {0.21198272705078125, 0.316241055727005, 0.47177624702453613})
      for (int k = 0; k < 4; ++k) e.push_back(v);
  expect_values(softmax(x, 1), {2, 3, 4}, e, 1e-5);
  expect_values(softmax(x.transpose(0, 2), -1).select(1, 0).select(0, 0), {2}, {0.23147521913051605, 0.7685248255729675},
              1e-5);
}

TEST_CASE("log_softmax: values along dims") {
  Tensor y = y34();
  expect_values(log_softmax(y, 1), {3, 4},
              {-2.610081672668457, -5.610081672668457, -0.11008156836032867, -3.610081672668457, -3.3846840858459473,
               -2.3846840858459473, -13.384683609008789, -0.1346839964389801, -18.313261032104492,
               -1.3132617473602295, -0.3132617473602295, -21.313261032104492},
              1e-5);
  expect_values(log_softmax(y, 0), {3, 4},
              {-3.048593282699585, -11.018166542053223, -6.501502513885498, -7.2507100105285645, -0.04859323427081108,
               -4.018166542053223, -16.001502990722656, -0.0007098776986822486, -12.048593521118164,
               -0.018166350200772285, -0.0015024575404822826, -18.250709533691406},
              1e-5);
  Tensor x = seq_tensor({2, 3, 4}, 0.1, -1);
  Tensor l0 = log_softmax(x, 0);
  expect_values(l0.select(0, 0).select(0, 0), {4}, std::vector<double>(4, -1.4632824659347534), 1e-5);
  expect_values(l0.select(0, 1).select(0, 0), {4}, std::vector<double>(4, -0.2632824659347534), 1e-5);
}

TEST_CASE("softmax / log_softmax: dtype=, 16-bit floats, infinities, 0-d and empty") {
  Tensor y = y34();
  Tensor d = softmax(y, 1, kFloat64);  // casts first, computes in float64
  CHECK(d.dtype() == kFloat64);
  expect_values(d.narrow(1, 0, 3).select(0, 0), {3}, {0.07352854418063706, 0.003660770656110881, 0.8957610454199294},
              1e-12);
  CHECK(log_softmax(y.to(kFloat64), 0, kFloat32).dtype() == kFloat32);
  Tensor h = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {4});
  Tensor sh = softmax(h.to(kFloat16), 0);
  CHECK(sh.dtype() == kFloat16);
  expect_values(sh, {4}, {0.2138671875, 0.236328125, 0.26123046875, 0.28857421875}, 2e-3);
  Tensor lb = log_softmax(h.to(kBFloat16), 0);
  CHECK(lb.dtype() == kBFloat16);
  expect_values(lb, {4}, {-1.5390625, -1.4453125, -1.34375, -1.2421875}, 1e-2);
  // all -inf or +inf rows give NaN (as PyTorch); a single -inf is an exact zero / -inf
  Tensor inf_rows = from_vector<float>({-kInfF, -kInfF, 1, kInfF, 1, -kInfF}, {3, 2});
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  expect_values(softmax(inf_rows, 1), {3, 2}, {nan, nan, nan, nan, 1, 0});
  expect_values(log_softmax(inf_rows, 1), {3, 2}, {nan, nan, nan, nan, 0, -inf});
  expect_values(softmax(scalar_tensor(3.0, TensorOptions(kFloat32)), 0), {}, {1});
  expect_values(log_softmax(scalar_tensor(3.0, TensorOptions(kFloat32)), -1), {}, {0});
  expect_values(softmax(zeros({0, 3}), 0), {0, 3}, {});
  // long rows take the parallel path; each row sums to 1
  Tensor big = seq_tensor({8, 10000}, 1e-3, -5);
  Tensor sb = softmax(big, 1);
  std::vector<float> v = sb.to_vector<float>();
  for (int r = 0; r < 8; ++r) {
    double s = 0;
    for (int i = 0; i < 10000; ++i) s += v[size_t(r * 10000 + i)];
    CHECK(std::fabs(s - 1.0) < 1e-4);
  }
}

TEST_CASE("softmax / log_softmax: float rows through either exp (libmvec within 87 of the max, vec_exp beyond)") {
  // Row 0 spans 80 below its max (libmvec's fast range), row 1 reaches 95 below (a subnormal
  // term), row 2 holds masked -inf scores: the last two take vec_exp. Every row is checked
  // against a double computation within float32's accuracy: a few ulp, plus the rounding of
  // x - max to float, which moves exp(x - max) by up to |x - max| * 2^-24 relatively.
  const int64_t D = 300;
  std::vector<float> x(size_t(3 * D));
  for (int64_t i = 0; i < D; ++i) {
    x[size_t(i)] = float(std::sin(double(i)) * 40 + 3);
    x[size_t(D + i)] = float(-95.0 * double(i) / double(D - 1) + 2);
    x[size_t(2 * D + i)] = i % 3 == 0 ? -kInfF : float(std::cos(double(i)) * 5);
  }
  const Tensor t = from_vector(x, {3, D});
  std::vector<double> soft(x.size()), logsoft(x.size()), below_max(x.size());
  for (int64_t r = 0; r < 3; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < D; ++i) m = std::max(m, double(x[size_t(r * D + i)]));
    for (int64_t i = 0; i < D; ++i) s += std::exp(double(x[size_t(r * D + i)]) - m);
    for (int64_t i = 0; i < D; ++i) {
      const double v = double(x[size_t(r * D + i)]) - m;
      below_max[size_t(r * D + i)] = -v;
      soft[size_t(r * D + i)] = std::exp(v) / s;
      logsoft[size_t(r * D + i)] = v - std::log(s);
    }
  }
  const std::vector<float> got = softmax(t, 1).to_vector<float>(), got_log = log_softmax(t, 1).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i);
    const double rel = 5e-7 + (std::isinf(below_max[i]) ? 0 : below_max[i] * 6e-8);
    CHECK(std::fabs(double(got[i]) - soft[i]) <= rel * soft[i] + 1.5e-45);  // + half a subnormal step
    if (std::isinf(logsoft[i])) CHECK(got_log[i] == -kInfF);
    else CHECK(std::fabs(double(got_log[i]) - logsoft[i]) <= 1e-5 * std::max(1.0, std::fabs(logsoft[i])));
  }
}

TEST_CASE("softmax / log_softmax: errors") {
  Tensor y = y34();
  CHECK_THROWS_AS(softmax(y, 2), IndexError);
  CHECK_THROWS_AS(log_softmax(y, -3), IndexError);
  CHECK_THROWS_AS(softmax(from_vector<float>({1, 2}, {2}), 1), IndexError);
  CHECK(has(error_text<DTypeError>([&] { softmax(y, 1, kInt64); }), "expected a floating point dtype"));
}

TEST_CASE("nll_loss: reductions, weights, ignore_index") {
  Tensor x = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {2, 3});
  Tensor t = from_vector<int64_t>({2, 0}, {2});
  expect_values(nll_loss(x, t, Tensor(), 0), {2}, {-0.3, -0.4});
  expect_values(nll_loss(x, t), {}, {-0.35});
  expect_values(nll_loss(x, t, Tensor(), 2), {}, {-0.7});
  Tensor w = from_vector<float>({1, 2, 0.5f}, {3});
  expect_values(nll_loss(x, t, w, 0), {2}, {-0.15, -0.4});
  expect_values(nll_loss(x, t, w, 1), {}, {-0.55 / 1.5});  // divided by the summed weights
  expect_values(nll_loss(x, t, w, 2), {}, {-0.55});
  expect_values(nll_loss(x, t, Tensor(), 1, 0), {}, {-0.3});        // target 0 ignored
  expect_values(nll_loss(x, t, Tensor(), 0, 0), {2}, {-0.3, 0});
  Tensor ignored = from_vector<int64_t>({-100, -100}, {2});
  expect_values(nll_loss(x, ignored), {}, {std::numeric_limits<double>::quiet_NaN()});  // 0 / 0 as PyTorch
  expect_values(nll_loss(x, ignored, Tensor(), 2), {}, {0});
  // non-contiguous input: x.t().t() with a transposed copy
  Tensor xt = from_vector<float>({0.1f, 0.4f, 0.2f, 0.5f, 0.3f, 0.6f}, {3, 2}).t();
  expect_values(nll_loss(xt, t, w, 0), {2}, {-0.15, -0.4});
  // no batch dim: [C] input, 0-d target
  Tensor x1 = from_vector<float>({0.1f, 0.2f, 0.3f}, {3});
  Tensor t1 = scalar_tensor(1, TensorOptions(kInt64));
  expect_values(nll_loss(x1, t1), {}, {-0.2});
  expect_values(nll_loss(x1, t1, Tensor(), 0), {}, {-0.2});
  // float64 and bfloat16
  expect_values(nll_loss(x.to(kFloat64), t, w.to(kFloat64)), {}, {-0.55 / 1.5}, 1e-7);  // float32 inputs
  Tensor b = nll_loss(x.to(kBFloat16), t);
  CHECK(b.dtype() == kBFloat16);
  expect_values(b, {}, {-0.35}, 1e-2);
  // empty batch: mean is NaN, sum is 0
  expect_values(nll_loss(zeros({0, 3}), zeros({0}, TensorOptions(kInt64))), {}, {std::numeric_limits<double>::quiet_NaN()});
  expect_values(nll_loss(zeros({0, 3}), zeros({0}, TensorOptions(kInt64)), Tensor(), 2), {}, {0});
}

TEST_CASE("nll_loss: spatial inputs [N, C, d1]") {
  std::vector<float> v(24);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) / 10.0f;
  Tensor x = from_vector(v, {2, 3, 4});
  Tensor t = from_vector<int64_t>({0, 1, 2, 1, 2, 2, 0, -100}, {2, 4});
  Tensor w = from_vector<float>({1, 2, 0.5f}, {3});
  expect_values(nll_loss(x, t, w, 0), {2, 4}, {0, -1, -0.5, -1.4, -1, -1.05, -1.4, 0}, 1e-6);
  expect_values(nll_loss(x, t, w, 1), {}, {-6.35 / 7.5}, 1e-6);
  expect_values(nll_loss(x, t, w, 2), {}, {-6.35}, 1e-6);
  CHECK(has(error_text<ShapeError>([&] { nll_loss(x, from_vector<int64_t>({0, 1, 2, 0, 1, 2}, {2, 3})); }),
            "Expected target size [2, 4], got [2, 3]"));
}

TEST_CASE("nll_loss: errors") {
  Tensor x = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {2, 3});
  CHECK(has(error_text<IndexError>([&] { nll_loss(x, from_vector<int64_t>({7, 0}, {2})); }), "Target 7 is out of bounds."));
  CHECK(has(error_text<IndexError>([&] { nll_loss(x, from_vector<int64_t>({-1, 0}, {2}), Tensor(), 0); }),
            "Target -1 is out of bounds."));
  CHECK(has(error_text<ShapeError>([&] { nll_loss(x, from_vector<int64_t>({0, 1, 2}, {3})); }),
            "Expected input batch_size (2) to match target batch_size (3)."));
  CHECK(has(error_text<DTypeError>([&] { nll_loss(x, from_vector<int32_t>({0, 1}, {2})); }), "int64"));
  CHECK(has(error_text<ShapeError>([&] { nll_loss(x, from_vector<int64_t>({0, 1}, {2}), ones({4})); }),
            "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [4]"));
  CHECK_THROWS_AS(nll_loss(x, from_vector<int64_t>({0, 1}, {2}), ones({3}, TensorOptions(kFloat64))), DTypeError);
  CHECK_THROWS_AS(nll_loss(x, from_vector<int64_t>({0, 1}, {2}), Tensor(), 3), ValueError);
  CHECK(has(error_text<ShapeError>([&] { nll_loss(from_vector<float>({0.1f, 0.2f}, {2}), from_vector<int64_t>({1}, {1})); }),
            "size mismatch (got input: [2], target: [1])"));
  CHECK_THROWS_AS(nll_loss(scalar_tensor(1.0, TensorOptions(kFloat32)), scalar_tensor(0, TensorOptions(kInt64))),
                  ShapeError);
}
