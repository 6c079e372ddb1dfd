// Dropout ops: the kept fraction, the 1 / (1 - p) scale, the mask's replay from a seed, per-channel
// masks, alpha dropout's preserved moments, gradients, and PyTorch's errors. Random draws come from
// kiln's Philox generator, so these tests check properties, not PyTorch's values.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/generator.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/alpha_dropout.h"
#include "kiln/gen/api/alpha_dropout_.h"
#include "kiln/gen/api/dropout.h"
#include "kiln/gen/api/dropout1d.h"
#include "kiln/gen/api/dropout2d.h"
#include "kiln/gen/api/dropout3d.h"
#include "kiln/gen/api/dropout_.h"
#include "kiln/gen/api/feature_alpha_dropout.h"
#include "kiln/gen/api/feature_alpha_dropout_.h"
#include "kiln/gen/api/feature_dropout.h"
#include "kiln/gen/api/feature_dropout_.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/native_dropout.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::has;

namespace {
std::vector<float> values(const Tensor& t) { return t.to(DType::Float32).to_vector<float>(); }

// Each channel of y (dim channel_dim, planes of `plane` elements after it) is all 0 or all `kept`.
void expect_whole_channels(const Tensor& y, int64_t plane, float kept) {
  const std::vector<float> v = values(y);
  int64_t zeros = 0, ones = 0;
  for (size_t b = 0; b < v.size(); b += size_t(plane)) {
    bool all_zero = true, all_kept = true;
    for (size_t i = b; i < b + size_t(plane); ++i) all_zero &= v[i] == 0.0f, all_kept &= v[i] == kept;
    CHECK((all_zero || all_kept));
    zeros += all_zero, ones += all_kept;
  }
  CHECK(zeros > 0);
  CHECK(ones > 0);
}
}  // namespace

TEST_CASE("native_dropout: keeps about 1 - p, scales by 1 / (1 - p), and replays from the seed") {
  manual_seed(7);
  Tensor x = ones({100000});
  auto [y, mask] = native_dropout(x, 0.3, true);
  CHECK(mask.dtype() == DType::Bool);
  const double kept = mean(mask.to(DType::Float64)).item<double>();
  CHECK(std::fabs(kept - 0.7) < 0.01);
  const std::vector<float> ys = y.to_vector<float>();
  std::vector<bool> ms;  // (no lambda here: clang's C++17 cannot capture a structured binding)
  for (uint8_t b : mask.to(DType::UInt8).to_vector<uint8_t>()) ms.push_back(b != 0);
  for (size_t i = 0; i < ys.size(); i += 997) CHECK(ys[i] == (ms[i] ? float(1 / 0.7) : 0.0f));
  manual_seed(7);
  auto [y2, mask2] = native_dropout(x, 0.3, true);
  CHECK(mask.to(DType::UInt8).to_vector<uint8_t>() == mask2.to(DType::UInt8).to_vector<uint8_t>());
}

TEST_CASE("dropout: eval and p = 0 return the input, p = 1 zeroes, gradients are mask / (1 - p)") {
  Tensor x = from_vector<double>({1, 2, 3, 4}, {4});
  CHECK(dropout(x, 0.5, false).is_same(x));
  auto [e, emask] = native_dropout(x, 0.5, false);
  CHECK(e.to_vector<double>() == x.to_vector<double>());
  CHECK(emask.to(DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(dropout(x, 1.0, true).to_vector<double>() == std::vector<double>{0, 0, 0, 0});
  Tensor xr = ones({1000}, DType::Float64).requires_grad_(true);
  manual_seed(3);
  Tensor y = dropout(xr, 0.25, true);
  sum(y).backward();
  CHECK(xr.grad().to_vector<double>() == y.detach().to_vector<double>());  // d y_i / d x_i = y_i for x = 1
}

TEST_CASE("feature_dropout zeroes whole channels, alpha_dropout keeps mean 0 and variance 1") {
  manual_seed(11);
  Tensor x = ones({8, 16, 3, 3});
  Tensor y = feature_dropout(x, 0.5, true);
  // each (sample, channel) plane is all 0 or all 2
  Tensor planes = sum(y, {2, 3});
  for (float v : planes.to_vector<float>()) CHECK((v == 0.0f || v == 18.0f));
  manual_seed(5);
  Tensor z = randn({200000}, DType::Float64);
  Tensor a = alpha_dropout(z, 0.2, true);
  CHECK(std::fabs(mean(a).item<double>()) < 0.01);
  CHECK(std::fabs(var(a).item<double>() - 1.0) < 0.02);
  // a dropped element becomes alpha * a * (p - 1) with a = 1 / sqrt((alpha^2 p + 1)(1 - p))
  const double alpha = 1.7580993408473766, sa = 1 / std::sqrt((alpha * alpha * 0.2 + 1) * 0.8);
  manual_seed(5);
  Tensor zero_in = alpha_dropout(zeros({1000}, DType::Float64), 0.2, true);
  int dropped = 0;
  for (double v : zero_in.to_vector<double>()) {
    if (std::fabs(v - alpha * sa * (0.2 - 1)) < 1e-12) ++dropped;
    else CHECK(std::fabs(v - alpha * sa * 0.2) < 1e-12);  // kept zeros map to b = alpha * a * p
  }
  CHECK(dropped > 100);
  CHECK(dropped < 300);
}

TEST_CASE("dropout: p outside [0, 1] and feature dropout of a 1-d input raise") {
  Tensor x = ones({4});
  CHECK(has(error_text<ValueError>([&] { dropout(x, 1.5, true); }),
            "dropout probability has to be between 0 and 1, but got 1.5"));
  CHECK(has(error_text<ValueError>([&] { native_dropout(x, -0.1, true); }), "native_dropout"));
  CHECK(has(error_text<ShapeError>([&] { feature_dropout(x, 0.5, true); }), "at least 2 dimensions"));
}

TEST_CASE("in-place dropouts: the out-of-place draws written into self, self returned, bad p leaves it") {
  Tensor x = randn({64, 8, 3});
  for (int variant = 0; variant < 4; ++variant) {
    Tensor self = x.clone();
    manual_seed(21);
    Tensor want = variant == 0   ? dropout(x, 0.4, true)
                  : variant == 1 ? feature_dropout(x, 0.4, true)
                  : variant == 2 ? alpha_dropout(x, 0.4, true)
                                 : feature_alpha_dropout(x, 0.4, true);
    manual_seed(21);
    Tensor& got = variant == 0   ? dropout_(self, 0.4, true)
                  : variant == 1 ? feature_dropout_(self, 0.4, true)
                  : variant == 2 ? alpha_dropout_(self, 0.4, true)
                                 : feature_alpha_dropout_(self, 0.4, true);
    CHECK(&got == &self);
    CHECK(values(self) == values(want));
  }
  Tensor kept = x.clone();
  CHECK(values(dropout_(kept, 0.5, false)) == values(x));  // eval: unchanged
  CHECK(has(error_text<ValueError>([&] { alpha_dropout_(kept, 2.0, true); }), "alpha_dropout_"));
  CHECK(values(kept) == values(x));
  // p = 1 zeroes every variant, alpha ones too (PyTorch 1.13: input * 0)
  for (float v : values(alpha_dropout(x, 1.0, true))) CHECK(v == 0.0f);
  for (float v : values(feature_alpha_dropout_(kept, 1.0, true))) CHECK(v == 0.0f);
  // through autograd: the in-place dropout of a non-leaf sends mask / (1 - p) back
  Tensor leaf = ones({500}, DType::Float64).requires_grad_(true);
  Tensor h = leaf * 1.0;
  manual_seed(4);
  dropout_(h, 0.5, true);
  sum(h).backward();
  CHECK(leaf.grad().to_vector<double>() == h.detach().to_vector<double>());
}

TEST_CASE("dropout1d/2d/3d: whole channels, PyTorch 1.13's rank rules, inplace into the input") {
  manual_seed(13);
  expect_whole_channels(dropout1d(ones({16, 8, 5}), 0.5), 5, 2.0f);          // [N, C, L]
  expect_whole_channels(dropout1d(ones({32, 5}), 0.5, true), 5, 2.0f);       // [C, L]: a batch of one
  expect_whole_channels(dropout2d(ones({8, 8, 3, 3}), 0.5), 9, 2.0f);        // [N, C, H, W]
  expect_whole_channels(dropout2d(ones({16, 8, 5}), 0.5), 5, 2.0f);          // 3-D: [N, C, L], as 1.13
  expect_whole_channels(dropout3d(ones({4, 8, 2, 2, 2}), 0.5), 8, 2.0f);     // [N, C, D, H, W]
  expect_whole_channels(dropout3d(ones({32, 2, 2, 2}), 0.5), 8, 2.0f);       // [C, D, H, W]
  CHECK(dropout2d(ones({2, 3}), 0.5, false).sizes().vec() == std::vector<int64_t>{2, 3});
  // an unbatched input draws one entry per channel, as its batch of one does
  Tensor x = randn({6, 7});
  manual_seed(9);
  Tensor a = dropout1d(x, 0.5);
  manual_seed(9);
  Tensor b = dropout1d(x.unsqueeze(0), 0.5).squeeze(0);
  CHECK(values(a) == values(b));
  // inplace writes into the input (through the batch-of-one view too) and returns it
  Tensor self = x.clone();
  manual_seed(9);
  Tensor r = dropout1d(self, 0.5, true, /*inplace=*/true);
  CHECK(r.is_same(self));
  CHECK(values(self) == values(a));
  Tensor self4 = ones({2, 6, 2, 2});
  manual_seed(9);
  dropout2d(self4, 0.5, true, true);
  expect_whole_channels(self4, 4, 2.0f);
  // errors name the op and the argument
  CHECK(has(error_text<ShapeError>([&] { dropout1d(ones({2, 3, 4, 5}), 0.5); }),
            "dropout1d: Expected 2D or 3D input, but received a 4D input"));
  CHECK(has(error_text<ValueError>([&] { dropout2d(ones({2, 3, 4, 5}), -0.5); }), "dropout2d"));
  CHECK(has(error_text<ShapeError>([&] { dropout2d(ones({4}), 0.5); }), "at least 2 dimensions"));
}

