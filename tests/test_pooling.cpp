// Pooling, resampling, padding and pixel shuffles beyond the generated tests: NaN and -inf
// windows, ceil_mode's sizes, overlapping windows' gradients, source-index rules, empty batches
// and PyTorch's errors. Expected values from PyTorch 1.13 (torch.ops.aten.*, F.pad, F.pixel_shuffle).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/common/pooling_index.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_adaptive_avg_pool2d.h"
#include "kiln/gen/api/adaptive_avg_pool1d.h"
#include "kiln/gen/api/adaptive_max_pool2d.h"
#include "kiln/gen/api/avg_pool1d.h"
#include "kiln/gen/api/avg_pool2d.h"
#include "kiln/gen/api/avg_pool2d_backward.h"
#include "kiln/gen/api/constant_pad_nd.h"
#include "kiln/gen/api/max_pool1d_with_indices.h"
#include "kiln/gen/api/max_pool2d.h"
#include "kiln/gen/api/max_pool2d_with_indices.h"
#include "kiln/gen/api/max_pool2d_with_indices_backward.h"
#include "kiln/gen/api/max_unpool2d.h"
#include "kiln/gen/api/pad.h"
#include "kiln/gen/api/pixel_shuffle.h"
#include "kiln/gen/api/pixel_unshuffle.h"
#include "kiln/gen/api/upsample_bilinear2d.h"
#include "kiln/gen/api/upsample_bilinear2d_backward.h"
#include "kiln/gen/api/upsample_nearest2d.h"
#include "kiln/gen/api/upsample_nearest2d_backward.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// [[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 7, 9], [3, 2, 3, 8, 4], [6, 2, 6, 4, 3]] as [1, 5, 5]
Tensor digits(DType dt = DType::Float64) {
  return from_vector<double>({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3}, {1, 5, 5})
      .to(dt);
}

std::vector<double> as_doubles(const Tensor& t) { return t.to_vector<double>(); }
}  // namespace

TEST_CASE("max_pool2d_with_indices: NaN wins its window, ceil_mode keeps a window started inside the input") {
  std::vector<double> v(20);
  for (int i = 0; i < 20; ++i) v[size_t(i)] = i;
  v[6] = kNaN;
  v[13] = -kInf;
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    auto [out, idx] = max_pool2d_with_indices(from_vector<double>(v, {1, 1, 4, 5}).to(dt), {2, 2}, {2, 2}, {0, 0},
                                              {1, 1}, /*ceil_mode=*/true);
    expect_values(out, {1, 1, 2, 3}, {kNaN, 8, 9, 16, 18, 19}, 0);
    expect_values(idx, {1, 1, 2, 3}, {6, 8, 9, 16, 18, 19}, 0);
    CHECK(idx.dtype() == DType::Int64);
  }
  // every element -inf: each window keeps its first in-bounds index
  auto [out, idx] = max_pool2d_with_indices(full({1, 1, 3, 3}, -kInf, DType::Float64), {2, 2}, {1, 1}, {1, 1});
  CHECK(out.sizes().vec() == std::vector<int64_t>{1, 1, 4, 4});
  expect_values(idx, {1, 1, 4, 4}, {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8}, 0);
  // a window dilated past the input holds padding only: -inf and PyTorch's index outside the plane,
  // which passes no gradient
  auto [empty_out, empty_idx] = max_pool2d_with_indices(zeros({1, 1, 2, 9}), {2, 2}, {2, 1}, {1, 1}, {3, 3});
  expect_values(empty_out, {1, 1, 1, 8}, std::vector<double>(8, -kInf), 0);
  expect_values(empty_idx, {1, 1, 1, 8}, {20, 18, 19, 20, 21, 22, 23, 24}, 0);
  expect_values(max_pool2d_with_indices_backward(ones({1, 1, 1, 8}), zeros({1, 1, 2, 9}), {2, 2}, {2, 1}, {1, 1},
                                                 {3, 3}, false, empty_idx),
                {1, 1, 2, 9}, std::vector<double>(18, 0.0), 0);
  // ceil_mode drops a last window that would start in the right padding: 5 -> 3, not 4
  CHECK(max_pool2d(zeros({1, 1, 5, 5}), {2, 2}, {2, 2}, {1, 1}, {1, 1}, true).sizes().vec() ==
        std::vector<int64_t>{1, 1, 3, 3});
  CHECK(max_pool2d(zeros({1, 1, 5, 5}), {2, 2}, {2, 2}, {1, 1}, {1, 1}, false).sizes().vec() ==
        std::vector<int64_t>{1, 1, 3, 3});
  CHECK(max_pool2d(zeros({1, 1, 6, 6}), {2, 2}, {2, 2}, {1, 1}, {1, 1}, true).sizes().vec() ==
        std::vector<int64_t>{1, 1, 4, 4});
}

TEST_CASE("max_pool2d_with_indices: dilation, padding, ceil_mode, the backward sums overlapping windows") {
  auto [out, idx] = max_pool2d_with_indices(digits(), {3, 2}, {2, 1}, {1, 1}, {2, 2}, true);
  expect_values(out, {1, 2, 5}, {2, 9, 8, 6, 8, 2, 9, 8, 6, 8}, 0);
  expect_values(idx, {1, 2, 5}, {6, 5, 18, 7, 18, 6, 5, 18, 7, 18}, 0);
  const Tensor g = arange(1.0, 11.0, 1.0, DType::Float64).reshape({1, 2, 5});
  const Tensor dx = max_pool2d_with_indices_backward(g, digits(), {3, 2}, {2, 1}, {1, 1}, {2, 2}, true, idx);
  std::vector<double> want(25, 0.0);
  want[5] = 9, want[6] = 7, want[7] = 13, want[18] = 26;
  expect_values(dx, {1, 5, 5}, want, 0);
  // autograd reaches the same gradient through max_pool2d
  Tensor x = digits().requires_grad_(true);
  max_pool2d(x, {3, 2}, {2, 1}, {1, 1}, {2, 2}, true).backward(g);
  expect_values(x.grad(), {1, 5, 5}, want, 0);
}

TEST_CASE("max_pool2d: PyTorch's argument errors name the op and argument") {
  const Tensor x = zeros({1, 2, 5, 5});
  auto pool = [&](const Tensor& t, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                  std::vector<int64_t> d) { return max_pool2d_with_indices(t, k, s, p, d); };
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {3, 3}, {1, 1}, {2, 2}, {1, 1});
            }),
            "pad should be at most half of kernel size, but got pad=2 and kernel_size=3"));
  CHECK(has(error_text<ValueError>([&] { pool(x, {0, 3}, {}, {0}, {1}); }), "stride should not be zero"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {0, 3}, {1, 1}, {0}, {1});
            }),
            "kernel size should be greater than zero, but got kH: 0 kW: 3"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {3, 3}, {-1, 1}, {0}, {1});
            }),
            "stride should be greater than zero, but got dH: -1 dW: 1"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {3, 3}, {1, 1}, {0, 0}, {0, 1});
            }),
            "dilation should be greater than zero, but got dilationH: 0 dilationW: 1"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {2, 2}, {1, 1}, {-1, 0}, {1});
            }),
            "pad must be non-negative, but got pad: -1"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {7, 7}, {}, {0}, {1});
            }),
            "Given input size: (2x5x5). Calculated output size: (2x0x0). Output size is too small"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {2, 2, 2}, {}, {0}, {1});
            }),
            "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"));
  CHECK(has(error_text<ValueError>([&] {
              pool(x, {2, 2}, {1, 1, 1}, {0}, {1});
            }),
            "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"));
  CHECK(has(error_text<ShapeError>([&] {
              pool(zeros({5, 5}), {2, 2}, {}, {0}, {1});
            }),
            "non-empty 3D or 4D (batch mode) tensor expected for input"));
  CHECK(has(error_text<ShapeError>([&] {
              pool(zeros({2, 0, 5, 5}), {2, 2}, {}, {0}, {1});
            }),
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 5, 5]"));
  try {
    pool(x, {3, 3}, {1, 1}, {2, 2}, {1, 1});
  } catch (const Error& e) {
    CHECK(e.op() == "max_pool2d_with_indices");
    CHECK(e.arg() == "padding");
  }
  CHECK(has(error_text<DTypeError>([&] { pool(zeros({1, 5, 5}, DType::Int64), {2, 2}, {}, {0}, {1}); }), "int64"));
  CHECK(has(error_text<ValueError>([&] {
              max_pool1d_with_indices(zeros({2, 5}), {2, 2});
            }),
            "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size 2"));
  CHECK(has(error_text<ShapeError>([&] { max_pool1d_with_indices(zeros({5}), {2}); }),
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[5]"));
}

TEST_CASE("pooling: an empty batch gives an empty result, forward and backward") {
  const Tensor x = zeros({0, 2, 5, 5});
  auto [out, idx] = max_pool2d_with_indices(x, {2, 2});
  CHECK(out.sizes().vec() == std::vector<int64_t>{0, 2, 2, 2});
  CHECK(max_pool2d_with_indices_backward(out, x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, idx).sizes().vec() ==
        x.sizes().vec());
  const Tensor a = avg_pool2d(x, {2, 2});
  CHECK(a.sizes().vec() == std::vector<int64_t>{0, 2, 2, 2});
  CHECK(avg_pool2d_backward(a, x, {2, 2}, {2, 2}, {0, 0}, false, true, std::nullopt).numel() == 0);
  CHECK(_adaptive_avg_pool2d(x, {3, 3}).sizes().vec() == std::vector<int64_t>{0, 2, 3, 3});
  CHECK(std::get<0>(adaptive_max_pool2d(x, {3, 3})).sizes().vec() == std::vector<int64_t>{0, 2, 3, 3});
  CHECK(upsample_nearest2d(x, {7, 3}).sizes().vec() == std::vector<int64_t>{0, 2, 7, 3});
  CHECK(upsample_bilinear2d(x, {7, 3}, false).sizes().vec() == std::vector<int64_t>{0, 2, 7, 3});
  // an adaptive output of 0 rows is empty too (PyTorch's adaptive_max_pool2d allows it)
  CHECK(std::get<0>(adaptive_max_pool2d(zeros({1, 2, 5, 5}), {0, 2})).sizes().vec() ==
        std::vector<int64_t>{1, 2, 0, 2});
}

TEST_CASE("avg_pool2d: count_include_pad, divisor_override, ceil_mode, the backward divides as the forward") {
  expect_values(avg_pool2d(digits(), {3, 3}, {2, 2}, {1, 1}, true, false), {1, 3, 3},
                {3.75, 19.0 / 6, 3.5, 29.0 / 6, 50.0 / 9, 6, 3.25, 25.0 / 6, 4.75}, 1e-12);
  expect_values(avg_pool2d(digits(), {3, 3}, {2, 2}, {1, 1}, true, true), {1, 3, 3},
                {15.0 / 9, 19.0 / 9, 14.0 / 9, 29.0 / 9, 50.0 / 9, 4, 13.0 / 9, 25.0 / 9, 19.0 / 9}, 1e-12);
  expect_values(avg_pool2d(digits(), {2, 3}, {2, 2}, {1, 1}, false, true, 5), {1, 3, 3},
                {0.8, 1.2, 1.2, 4.8, 7.4, 4.8, 2.6, 5, 3.8}, 1e-12);
  const Tensor g = arange(1.0, 10.0, 1.0, DType::Float64).reshape({1, 3, 3});
  expect_values(
      avg_pool2d_backward(g, digits(), {3, 3}, {2, 2}, {1, 1}, true, false, std::nullopt), {1, 5, 5},
      {0.25,          0.58333333333, 0.33333333333, 1.08333333333, 0.75,          0.91666666667, 1.80555555556,
       0.88888888889, 2.63888888889, 1.75,          0.66666666667, 1.22222222222, 0.55555555556, 1.55555555556,
       1.0,           2.41666666667, 4.30555555556, 1.88888888889, 5.13888888889, 3.25,          1.75,
       3.08333333333, 1.33333333333, 3.58333333333, 2.25},
      1e-10);
  CHECK(has(error_text<ValueError>([&] {
              avg_pool2d(digits(), {3, 3}, {1, 1}, {1, 1}, false, true, 0);
            }),
            "divisor must be not zero"));
  CHECK(has(error_text<ValueError>([&] {
              avg_pool2d(digits(), {2, 2}, {2, 2}, {1, 1, 1});
            }),
            "avg_pool2d: padding must either be a single int, or a tuple of two ints"));
  // the 1-d pool is the 2-d one over a single row
  expect_values(avg_pool1d(from_vector<double>({1, 2, 3, 4, 5}, {1, 5}), {2}, {2}, {1}, true, false), {1, 3},
                {1, 2.5, 4.5}, 1e-12);
}

TEST_CASE("adaptive pools: output i covers floor(i * in / out) to ceil((i + 1) * in / out)") {
  expect_values(_adaptive_avg_pool2d(digits(), {3, 2}), {1, 3, 2}, {25.0 / 6, 4, 47.0 / 9, 6, 11.0 / 3, 14.0 / 3},
                1e-12);
  auto [out, idx] = adaptive_max_pool2d(digits(), {2, 3});
  expect_values(out, {1, 2, 3}, {9, 9, 9, 8, 9, 9}, 0);
  expect_values(idx, {1, 2, 3}, {5, 12, 14, 11, 12, 14}, 0);
  expect_values(adaptive_avg_pool1d(from_vector<double>({1, 2, 3, 4, 5}, {1, 5}), {3}), {1, 3}, {1.5, 3, 4.5}, 1e-12);
  CHECK(has(error_text<ShapeError>([&] {
              _adaptive_avg_pool2d(zeros({5, 5}), {2, 2});
            }),
            "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 5]"));
  CHECK(has(error_text<ShapeError>([&] {
              adaptive_max_pool2d(zeros({2, 0, 3}), {2, 2});
            }),
            "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has "
            "sizes [2, 0, 3] with dimension 1 being empty"));
  CHECK(has(error_text<ValueError>([&] {
              _adaptive_avg_pool2d(zeros({2, 4, 3}), {2});
            }),
            "adaptive_avg_pool2d: output_size must be 2"));
}

TEST_CASE("upsample_nearest2d: floor(o * scale) in float, 1 / scales_h when given, the backward sums its copies") {
  const Tensor y = arange(6, DType::Float64).reshape({1, 1, 2, 3});
  expect_values(upsample_nearest2d(y, {3, 5}), {1, 1, 3, 5}, {0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5}, 0);
  expect_values(upsample_nearest2d(y, {5, 4}, 1.7, 1.3), {1, 1, 5, 4},
                {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5, 3, 3, 4, 5}, 0);
  const Tensor g = arange(1.0, 16.0, 1.0, DType::Float64).reshape({1, 1, 3, 5});
  expect_values(upsample_nearest2d_backward(g, {3, 5}, {1, 1, 2, 3}), {1, 1, 2, 3}, {16, 24, 15, 23, 27, 15}, 0);
  CHECK(has(error_text<ValueError>([&] {
              upsample_nearest2d(y, {0, 3});
            }),
            "Input and output sizes should be greater than 0, but got input (H: 2, W: 3) output (H: 0, W: 3)"));
  CHECK(has(error_text<ShapeError>([&] {
              upsample_nearest2d(zeros({2, 3, 3}), {3, 3});
            }),
            "It is expected input_size equals to 4, but got size 3"));
  CHECK(
      has(error_text<ShapeError>([&] {
            upsample_nearest2d_backward(zeros({2, 1, 3, 4}), {3, 3}, {2, 1, 5, 5});
          }),
          "Expected grad_output to have the same shape as output; output.size(3) = 3 but got grad_output.size(3) = 4"));
}

TEST_CASE("upsample_bilinear2d: align_corners, half-pixel centres clamped at 0, given scales, the backward") {
  const Tensor y = arange(6, DType::Float64).reshape({1, 1, 2, 3});
  expect_values(upsample_bilinear2d(y, {3, 4}, true), {1, 1, 3, 4},
                {0, 2.0 / 3, 4.0 / 3, 2, 1.5, 13.0 / 6, 17.0 / 6, 3.5, 3, 11.0 / 3, 13.0 / 3, 5}, 1e-12);
  expect_values(upsample_bilinear2d(y, {3, 4}, false), {1, 1, 3, 4},
                {0, 0.625, 1.375, 2, 1.5, 2.125, 2.875, 3.5, 3, 3.625, 4.375, 5}, 1e-12);
  expect_values(upsample_bilinear2d(y, {4, 5}, false, 2.5, 1.5), {1, 1, 4, 5},
                {0,   0.5, 7.0 / 6, 11.0 / 6, 2,   0.3, 0.8, 22.0 / 15, 32.0 / 15, 2.3,
                 1.5, 2,   8.0 / 3, 10.0 / 3, 3.5, 2.7, 3.2, 58.0 / 15, 68.0 / 15, 4.7},
                1e-12);
  const Tensor g = arange(1.0, 13.0, 1.0, DType::Float64).reshape({1, 1, 3, 4});
  expect_values(upsample_bilinear2d_backward(g, {3, 4}, {1, 1, 2, 3}, false), {1, 1, 2, 3},
                {5.375, 7.1875, 10.4375, 16.375, 17.1875, 21.4375}, 1e-12);
  // a scale that points past the input (inconsistent with output_size) reads the last row
  expect_values(upsample_bilinear2d(y, {3, 4}, false, 0.1, std::nullopt), {1, 1, 3, 4},
                {3, 3.625, 4.375, 5, 3, 3.625, 4.375, 5, 3, 3.625, 4.375, 5}, 1e-12);
  expect_values(upsample_nearest2d(y, {2, 3}, 1e-30, std::nullopt), {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}, 0);
  // float32: the same values to float precision
  expect_values(upsample_bilinear2d(y.to(DType::Float32), {3, 4}, false), {1, 1, 3, 4},
                {0, 0.625, 1.375, 2, 1.5, 2.125, 2.875, 3.5, 3, 3.625, 4.375, 5}, 1e-6);
}

TEST_CASE("pad: reflect, replicate, circular (negative pads crop first) and constant, PyTorch's errors") {
  const Tensor z = arange(6, DType::Float64).reshape({1, 2, 3});
  expect_values(pad(z, {2, 1}, "reflect"), {1, 2, 6}, {2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}, 0);
  expect_values(pad(z, {2, 1}, "replicate"), {1, 2, 6}, {0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5}, 0);
  expect_values(pad(z, {-1, 2}, "constant", 7.0), {1, 2, 4}, {1, 2, 7, 7, 4, 5, 7, 7}, 0);
  expect_values(pad(arange(12, DType::Float64).reshape({1, 3, 4}), {1, -2}, "circular"), {1, 3, 3},
                {1, 0, 1, 5, 4, 5, 9, 8, 9}, 0);
  expect_values(pad(arange(12, DType::Float64).reshape({1, 3, 4}), {-1, 3}, "circular"), {1, 3, 6},
                {1, 2, 3, 1, 2, 3, 5, 6, 7, 5, 6, 7, 9, 10, 11, 9, 10, 11}, 0);
  expect_values(constant_pad_nd(from_vector<int64_t>({1, 2}, {2}), {1, 1}, 9), {4}, {9, 1, 2, 9}, 0);
  // a result is a new tensor even when nothing is padded
  const Tensor same = constant_pad_nd(z, {0, 0});
  CHECK(same.data_ptr() != z.data_ptr());
  CHECK(has(error_text<ValueError>([&] {
              pad(zeros({1, 2, 5, 5}), {5, 1, 1, 1}, "reflect");
            }),
            "Padding size should be less than the corresponding input dimension, but got: padding (5, 1) at "
            "dimension 3"));
  CHECK(has(error_text<ValueError>([&] {
              pad(zeros({1, 2, 5, 5}), {6, 1, 1, 1}, "circular");
            }),
            "Padding value causes wrapping around more than once."));
  CHECK(has(error_text<NotImplementedError>([&] {
              pad(zeros({1, 2, 5, 5}), {1, 1}, "reflect");
            }),
            "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now"));
  CHECK(has(error_text<NotImplementedError>([&] { pad(z, {1, 1}, "foo"); }), "Unrecognised padding mode foo"));
  CHECK(has(error_text<ValueError>([&] {
              pad(z, {1, 1}, "reflect", 2.0);
            }),
            "Padding mode \"reflect\" doesn't take in value argument"));
  CHECK(has(error_text<ValueError>([&] { pad(z, {1, 1, 1, 1, 1, 1, 1, 1}); }), "Padding length too large"));
  CHECK(has(error_text<ValueError>([&] {
              constant_pad_nd(z, {1, 1, 1});
            }),
            "Length of pad must be even but instead it equals 3"));
  CHECK(has(error_text<ValueError>([&] { constant_pad_nd(z, {-3, -1}); }), "resulted in a negative output size"));
  // gradients flow through the picked positions: reflect's edge-adjacent elements count twice
  Tensor x = z.clone().requires_grad_(true);
  pad(x, {2, 1}, "reflect").sum().backward();
  expect_values(x.grad(), {1, 2, 3}, {1, 3, 2, 1, 3, 2}, 0);
}

TEST_CASE("pixel_shuffle and pixel_unshuffle: PyTorch's order, each the other's inverse, errors") {
  const Tensor x = arange(16, DType::Float64).reshape({1, 4, 2, 2});
  const Tensor y = pixel_shuffle(x, 2);
  expect_values(y, {1, 1, 4, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}, 0);
  expect_values(pixel_unshuffle(y, 2), {1, 4, 2, 2}, as_doubles(x), 0);
  CHECK(has(error_text<ShapeError>([&] {
              pixel_shuffle(zeros({1, 2, 5, 5}), 2);
            }),
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            "but input.size(-3)=2 is not divisible by 4"));
  CHECK(has(error_text<ShapeError>([&] {
              pixel_shuffle(zeros({5, 5}), 2);
            }),
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension(s)"));
  CHECK(has(error_text<ValueError>([&] {
              pixel_shuffle(zeros({1, 4, 5, 5}), 0);
            }),
            "pixel_shuffle expects a positive upscale_factor, but got 0"));
  CHECK(has(error_text<ShapeError>([&] {
              pixel_unshuffle(zeros({1, 2, 5, 4}), 2);
            }),
            "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=5 is not "
            "divisible by 2"));
  // a factor whose square overflows int64 (the fuzzer's find: it divided by zero)
  CHECK(has(error_text<ShapeError>([&] { pixel_shuffle(zeros({1, 4, 5, 5}), int64_t(1) << 32); }), "too large"));
  CHECK(has(error_text<ShapeError>([&] { pixel_unshuffle(zeros({1, 4, 0, 0}), int64_t(1) << 32); }), "overflows"));
}

TEST_CASE("max_unpool2d: values back at their indices, zeros elsewhere, invalid indices raise") {
  Tensor x = digits().reshape({1, 1, 5, 5});
  Tensor out, idx;  // not a structured binding: the lambdas below capture them (clang C++17)
  std::tie(out, idx) = max_pool2d_with_indices(x, {2, 2}, {2, 2});
  std::vector<double> want(25, 0.0);
  want[5] = 9, want[7] = 6, want[11] = 8, want[12] = 9;
  expect_values(max_unpool2d(out, idx, {5, 5}), {1, 1, 5, 5}, want, 0);
  CHECK(has(error_text<IndexError>([&] {
              max_unpool2d(out, full({1, 1, 2, 2}, 25, DType::Int64), {5, 5});
            }),
            "Found an invalid max index: 25 (output volumes are of size 5x5"));
  CHECK(has(error_text<ValueError>([&] { max_unpool2d(out, idx, {5}); }),
            "There should be exactly two elements (height, width) in output_size, but got 1 elements."));
  CHECK(has(error_text<DTypeError>([&] {
              max_unpool2d(out, idx.to(DType::Int32), {5, 5});
            }),
            "elements in indices should be type int64 but got: int32"));
}

TEST_CASE("max_pool2d: second derivatives through the gather of the backward") {
  Tensor x = digits().reshape({1, 1, 5, 5}).requires_grad_(true);
  Tensor g = ones({1, 1, 2, 2}, DType::Float64).requires_grad_(true);
  auto [out, idx] = max_pool2d_with_indices(x, {2, 2});
  const Tensor dx = autograd::grad({out}, {x}, {g}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  // d(sum(dx * w))/dg reads w at each output's index
  const Tensor w = arange(25, DType::Float64).reshape({1, 1, 5, 5});
  const Tensor dg = autograd::grad({(dx * w).sum()}, {g})[0];
  expect_values(dg, {1, 1, 2, 2}, {5, 7, 11, 12}, 0);
}

// The backwards gather (each input sums the outputs that read it); here they are checked against
// the forwards' definitions scattered, over many window and scale geometries.
namespace {

struct Lcg {  // a small deterministic generator for geometries and values
  uint64_t s = 0x9e3779b97f4a7c15ull;
  int64_t below(int64_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return int64_t((s >> 33) % uint64_t(n));
  }
  double unit() { return double(below(1 << 20)) / double(1 << 20) - 0.5; }
};

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(got[i] - want[i]) <= 1e-12 * std::max(1.0, std::fabs(want[i])));
  }
}

}  // namespace

TEST_CASE("pooling index math: every gather backward is its forward scattered") {
  Lcg rng;
  for (int trial = 0; trial < 300; ++trial) {
    pool::Geometry2d g;
    g.planes = 1;
    for (pool::Dim* d : {&g.h, &g.w}) {
      d->in = 1 + rng.below(9);
      d->kernel = 1 + rng.below(4);
      d->stride = 1 + rng.below(3);
      d->dilation = 1 + rng.below(3);
      d->pad = rng.below(d->kernel / 2 + 1);
    }
    g.count_include_pad = rng.below(2) == 1;
    g.divisor = rng.below(3) == 0 ? 1 + rng.below(5) : 0;
    const bool ceil_mode = rng.below(2) == 1;
    std::vector<double> x(size_t(g.h.in * g.w.in));
    for (double& v : x) v = rng.unit();
    // windowed pools (max with dilation, avg without), when the output is not empty
    pool::Geometry2d m = g, a = g;
    bool ok = true;
    for (auto [md, ad] : {std::pair{&m.h, &a.h}, std::pair{&m.w, &a.w}}) {
      auto size = [&](const pool::Dim& d) {
        const int64_t num = d.in + 2 * d.pad - d.dilation * (d.kernel - 1) - 1 + (ceil_mode ? d.stride - 1 : 0);
        if (num < 0) return int64_t(0);
        int64_t out = num / d.stride + 1;
        if (ceil_mode && (out - 1) * d.stride >= d.in + d.pad) --out;
        return out;
      };
      md->out = size(*md);
      ad->dilation = 1;
      ad->out = size(*ad);
      ok = ok && md->out >= 1 && ad->out >= 1;
    }
    if (ok) {
      // max: gradient to each window's saved index
      std::vector<int64_t> idx(size_t(m.h.out * m.w.out));
      std::vector<double> dy(idx.size()), want(x.size(), 0.0), got(x.size());
      for (int64_t oh = 0; oh < m.h.out; ++oh)
        for (int64_t ow = 0; ow < m.w.out; ++ow) {
          double v;
          int64_t k;
          pool::max_over<double>(x.data(), m.w.in, pool::max_window(m.h, oh), m.h.dilation, pool::max_window(m.w, ow),
                                 m.w.dilation, &v, &k);
          const size_t o = size_t(oh * m.w.out + ow);
          idx[o] = k;
          dy[o] = rng.unit();
          // a window of padding only (dilated past the input) keeps an index outside the plane,
          // as PyTorch's, and passes no gradient
          if (k < m.h.in * m.w.in) want[size_t(k)] += dy[o];
        }
      for (int64_t ih = 0; ih < m.h.in; ++ih)
        for (int64_t iw = 0; iw < m.w.in; ++iw)
          got[size_t(ih * m.w.in + iw)] = pool::max_pool_grad<double>(
              m, dy.data(), idx.data(), ih, iw, pool::max_outputs_of(m.h, ih), pool::max_outputs_of(m.w, iw));
      check_close(got, want);
      // avg: each window's elements weighted by 1 / its divisor
      std::vector<double> ady(size_t(a.h.out * a.w.out)), awant(x.size(), 0.0), agot(x.size());
      for (int64_t oh = 0; oh < a.h.out; ++oh)
        for (int64_t ow = 0; ow < a.w.out; ++ow) {
          const pool::AvgSpan sh = pool::avg_window(a.h, oh), sw = pool::avg_window(a.w, ow);
          const double g0 = ady[size_t(oh * a.w.out + ow)] = rng.unit();
          for (int64_t ih = sh.begin; ih < sh.end; ++ih)
            for (int64_t iw = sw.begin; iw < sw.end; ++iw)
              awant[size_t(ih * a.w.in + iw)] += g0 / double(pool::avg_divisor(a, sh, sw));
        }
      for (int64_t ih = 0; ih < a.h.in; ++ih)
        for (int64_t iw = 0; iw < a.w.in; ++iw)
          agot[size_t(ih * a.w.in + iw)] = pool::avg_pool_grad<double>(a, ady.data(), ih, iw);
      check_close(agot, awant);
    }
    // adaptive and resampling geometries: any output size
    pool::Geometry2d r = g;
    for (pool::Dim* d : {&r.h, &r.w}) {
      d->out = 1 + rng.below(12);
      d->align_corners = rng.below(2) == 1;
      d->scale = rng.below(3) == 0 ? 0.3 + 3 * (rng.unit() + 0.5) : 0.0;
      d->nearest_scale = d->scale > 0 ? float(1.0 / d->scale) : float(d->in) / float(d->out);
    }
    r.w.align_corners = r.h.align_corners;
    std::vector<double> dy(size_t(r.h.out * r.w.out));
    for (double& v : dy) v = rng.unit();
    std::vector<double> ad(x.size(), 0.0), nn(x.size(), 0.0), bl(x.size(), 0.0);
    for (int64_t oh = 0; oh < r.h.out; ++oh)
      for (int64_t ow = 0; ow < r.w.out; ++ow) {
        const double g0 = dy[size_t(oh * r.w.out + ow)];
        const pool::Span sh = pool::adaptive_window(r.h, oh), sw = pool::adaptive_window(r.w, ow);
        for (int64_t ih = sh.begin; ih < sh.end; ++ih)
          for (int64_t iw = sw.begin; iw < sw.end; ++iw)
            ad[size_t(ih * r.w.in + iw)] += g0 / double((sh.end - sh.begin) * (sw.end - sw.begin));
        nn[size_t(pool::nearest_source(r.h, oh) * r.w.in + pool::nearest_source(r.w, ow))] += g0;
        const pool::Linear<double> lh = pool::linear_source<double>(r.h, oh), lw = pool::linear_source<double>(r.w, ow);
        for (auto [ih, wh] : {std::pair{lh.i0, lh.l0}, std::pair{lh.i0 + lh.step, lh.l1}})
          for (auto [iw, ww] : {std::pair{lw.i0, lw.l0}, std::pair{lw.i0 + lw.step, lw.l1}})
            bl[size_t(ih * r.w.in + iw)] += wh * ww * g0;
      }
    std::vector<double> ad_got(x.size()), nn_got(x.size()), bl_got(x.size());
    for (int64_t ih = 0; ih < r.h.in; ++ih)
      for (int64_t iw = 0; iw < r.w.in; ++iw) {
        const size_t i = size_t(ih * r.w.in + iw);
        ad_got[i] = pool::adaptive_avg_grad<double>(r, dy.data(), ih, iw);
        nn_got[i] = pool::nearest_grad<double>(r, dy.data(), ih, iw);
        bl_got[i] = pool::bilinear_grad<double>(r, dy.data(), ih, iw);
      }
    check_close(ad_got, ad);
    check_close(nn_got, nn);
    check_close(bl_got, bl);
  }
}

// The CPU max_pool2d forward is separable (each row's maxima, then the rows'); it must give the
// row-major window walk's value and index (kernels/common/pooling_index.h's max_over, the CUDA
// kernel's rule) for every geometry, with ties (small integers), NaN and -inf in the windows, on
// rows wide enough for its vector loops.
TEST_CASE("max_pool2d_with_indices: the CPU forward equals the window walk, ties, NaN and -inf included") {
  Lcg rng;
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t kh = 1 + rng.below(4), kw = 1 + rng.below(4), sh = 1 + rng.below(3), sw = 1 + rng.below(3);
    const int64_t dh = 1 + rng.below(2), dw = 1 + rng.below(3);
    const int64_t ph = rng.below(kh / 2 + 1), pw = rng.below(kw / 2 + 1);
    const int64_t H = 1 + rng.below(12), W = 1 + rng.below(40), planes = 1 + rng.below(3);
    const bool ceil_mode = rng.below(2) == 1;
    if (H + 2 * ph < dh * (kh - 1) + 1 || W + 2 * pw < dw * (kw - 1) + 1) continue;
    std::vector<double> x(size_t(planes * H * W));
    for (double& v : x) {
      const int64_t r = rng.below(40);
      v = r == 0 ? kNaN : r == 1 ? -kInf : double(rng.below(4));
    }
    for (DType dt : {DType::Float32, DType::Float64}) {
      auto [out, idx] = max_pool2d_with_indices(from_vector<double>(x, {planes, H, W}).to(dt), {kh, kw}, {sh, sw},
                                                {ph, pw}, {dh, dw}, ceil_mode);
      pool::Geometry2d g;
      g.planes = planes;
      g.h = {H, out.size(1), kh, sh, ph, dh};
      g.w = {W, out.size(2), kw, sw, pw, dw};
      std::vector<double> want_v, want_i;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t oh = 0; oh < g.h.out; ++oh)
          for (int64_t ow = 0; ow < g.w.out; ++ow) {
            double v;
            int64_t k;
            pool::max_over<double>(x.data() + p * H * W, W, pool::max_window(g.h, oh), dh, pool::max_window(g.w, ow),
                                   dw, &v, &k);
            want_v.push_back(v);
            want_i.push_back(double(k));
          }
      INFO("trial " << trial << " input [" << planes << ", " << H << ", " << W << "] kernel " << kh << "x" << kw
                    << " stride " << sh << "x" << sw << " pad " << ph << "x" << pw << " dilation " << dh << "x" << dw);
      expect_values(out, out.sizes().vec(), want_v, 0);
      expect_values(idx, idx.sizes().vec(), want_i, 0);
    }
  }
}
