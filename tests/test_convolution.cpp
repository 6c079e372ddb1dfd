// Convolution beyond the generated tests: values against PyTorch 1.13 (float64, checked in),
// the adjoint relation between convolution and its transpose, gradients through both, 16-bit
// inputs, im2col/col2im, and PyTorch's errors naming the argument.
#include <doctest/doctest.h>

#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/col2im.h"
#include "kiln/gen/api/conv1d.h"
#include "kiln/gen/api/conv2d.h"
#include "kiln/gen/api/conv3d.h"
#include "kiln/gen/api/conv_transpose2d.h"
#include "kiln/gen/api/convolution.h"
#include "kiln/gen/api/convolution_backward_weight.h"
#include "kiln/gen/api/im2col.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
double inner(const Tensor& a, const Tensor& b) { return kiln::sum(a * b).item<double>(); }
}  // namespace

TEST_CASE("conv2d: strided, padded, grouped values as PyTorch's") {
  Tensor x = arange(1, 65, 1, DType::Float64).reshape({2, 2, 4, 4}) / 10;
  Tensor w = from_vector<double>({1, -1, 0.5, 2, 0, 1, -2, 0.25}, {2, 1, 2, 2});
  expect_values(
      conv2d(x, w, Tensor(), {2}, {1}, {1}, 2), {2, 2, 3, 3},
      {0.2, 0.7, 0.2, 1.3, 2.6,  1.4, -1.3, -0.1, 1.6, 0.425, -3.125, -4.0,  2.725, -2.225, -5.6,  2.9, 3.1, 0.0,
       6.6, 8.7, 1.8, 4.5, 10.6, 6.2, -4.5, -0.1, 4.8, 1.225, -8.725, -10.4, 6.725, -4.625, -12.0, 6.1, 6.3, 0.0},
      1e-12);
}

TEST_CASE("conv_transpose2d: output_padding extends the output as PyTorch's") {
  Tensor x = from_vector<double>({1, 2, -1, 0.5}, {1, 1, 2, 2});
  Tensor w = arange(1, 10, 1, DType::Float64).reshape({1, 1, 3, 3});
  expect_values(conv_transpose2d(x, w, Tensor(), {2}, {1}, {1}), {1, 1, 4, 4},
                {5, 14, 10, 12, 6, 20.5, 17, 19.5, -5, -4, 2.5, 3, -8, -5.5, 4, 4.5}, 1e-12);
}

TEST_CASE("convolution and its transpose are adjoint: <conv(x, w), y> == <x, conv_transpose(y, w)>") {
  manual_seed(3);
  for (int64_t groups : {1, 2}) {
    INFO("groups " << groups);
    Tensor x = randn({2, 4, 7, 6}, DType::Float64), w = randn({6, 4 / groups, 3, 2}, DType::Float64);
    Tensor y = conv2d(x, w, Tensor(), {2, 1}, {1, 0}, {1, 2}, groups);
    Tensor v = randn(y.sizes().vec(), DType::Float64);
    // here the strided windows cover every row, so no output_padding
    Tensor back = conv_transpose2d(v, w, Tensor(), {2, 1}, {1, 0}, {0, 0}, groups, {1, 2});
    REQUIRE(back.sizes().vec() == x.sizes().vec());
    CHECK(inner(y, v) == doctest::Approx(inner(x, back)).epsilon(1e-12));
  }
}

TEST_CASE("conv2d backward: the input's gradient is the transposed convolution, the bias's the sum") {
  manual_seed(4);
  Tensor x = randn({2, 3, 5, 5}, DType::Float64).requires_grad_(true);
  Tensor w = randn({4, 3, 3, 3}, DType::Float64).requires_grad_(true);
  Tensor b = randn({4}, DType::Float64).requires_grad_(true);
  Tensor g = randn({2, 4, 3, 3}, DType::Float64);
  Tensor y = conv2d(x, w, b, {2}, {1});
  TensorList grads = autograd::grad({y}, {x, w, b}, {g});
  expect_values(grads[0], {2, 3, 5, 5}, conv_transpose2d(g, w, Tensor(), {2}, {1}).to_vector<double>(), 1e-12);
  expect_values(grads[2], {4}, kiln::sum(g, IntArrayRef{0, 2, 3}).to_vector<double>(), 1e-12);
  expect_values(grads[1], {4, 3, 3, 3},
                convolution_backward_weight(g, x.detach(), {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, false, {0, 0}, 1)
                    .to_vector<double>(),
                1e-12);
}

TEST_CASE("conv1d/conv2d/conv3d: unbatched inputs, and padding='same' keeps the size with uneven kernels") {
  manual_seed(5);
  Tensor x = randn({3, 9}, DType::Float64), w = randn({2, 3, 4}, DType::Float64);
  Tensor batched = conv1d(x.unsqueeze(0), w);
  expect_values(conv1d(x, w), {2, 6}, batched.squeeze(0).to_vector<double>(), 1e-14);
  Tensor same = conv1d(x, w, Tensor(), {1}, "same");
  CHECK(same.sizes().vec() == std::vector<int64_t>{2, 9});
  // PyTorch pads 1 on the left and 2 on the right for a reach of 3: the 'valid' result shifted by one
  expect_values(same.narrow(1, 1, 6), {2, 6}, batched.squeeze(0).to_vector<double>(), 1e-13);
  Tensor v3 = randn({1, 2, 3, 4, 5}, DType::Float64), w3 = randn({2, 2, 2, 2, 2}, DType::Float64);
  CHECK(conv3d(v3, w3, Tensor(), {1}, "same").sizes().vec() == std::vector<int64_t>{1, 2, 3, 4, 5});
  CHECK(conv3d(v3, w3, Tensor(), {1}, "valid").sizes().vec() == std::vector<int64_t>{1, 2, 2, 3, 4});
}

TEST_CASE("conv2d: float16 and bfloat16 inputs compute in float32 and round once") {
  manual_seed(6);
  Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3}), b = randn({4});
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    INFO(dtype_name(dt));
    Tensor xr = x.to(dt), wr = w.to(dt), br = b.to(dt);
    Tensor expected = conv2d(xr.to(DType::Float32), wr.to(DType::Float32), br.to(DType::Float32), {1}, {1}).to(dt);
    Tensor got = conv2d(xr, wr, br, {1}, {1});
    CHECK(got.dtype() == dt);
    expect_values(got.to(DType::Float32), {2, 4, 6, 6}, expected.to(DType::Float32).to_vector<double>(), 1e-6);
  }
}

TEST_CASE("im2col and col2im: fold of unfold counts each pixel's windows") {
  Tensor x = arange(0, 2 * 3 * 4 * 5, 1, DType::Float64).reshape({2, 3, 4, 5});
  Tensor cols = im2col(x, {2, 2}, {1, 1}, {0, 0}, {2, 2});  // 2x2 windows, stride 2: disjoint, the last column dropped
  CHECK(cols.sizes().vec() == std::vector<int64_t>{2, 12, 4});
  Tensor back = col2im(cols, {4, 5}, {2, 2}, {1, 1}, {0, 0}, {2, 2});
  expect_values(back.narrow(3, 0, 4), {2, 3, 4, 4}, x.narrow(3, 0, 4).contiguous().to_vector<double>(), 0);
  expect_values(back.narrow(3, 4, 1), {2, 3, 4, 1}, std::vector<double>(24, 0.0), 0);
  // overlapping windows: each pixel counted once per window that covers it
  Tensor ones4 = ones({1, 1, 3, 3}, DType::Float64);
  Tensor counts = col2im(im2col(ones4, {2, 2}, {1, 1}, {0, 0}, {1, 1}), {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1});
  expect_values(counts, {1, 1, 3, 3}, {1, 2, 1, 2, 4, 2, 1, 2, 1}, 0);
}

TEST_CASE("convolution: PyTorch's errors name the argument") {
  Tensor x = zeros({1, 4, 5, 5}), w = zeros({6, 2, 3, 3});
  CHECK(has(error_text<ShapeError>([&] {
              conv2d(x, zeros({5, 2, 3, 3}), Tensor(), {1}, IntArrayRef{0}, {1}, 2);
            }),
            "expected weight to be divisible by 2 at dimension 0"));
  CHECK(has(error_text<ShapeError>([&] { conv2d(x, w, Tensor(), {1}, IntArrayRef{0}, {1}, 1); }),
            "expected input[1, 4, 5, 5] to have 2 channels, but got 4 channels instead"));
  CHECK(has(error_text<ShapeError>([&] {
              conv2d(x, zeros({6, 2, 7, 7}), Tensor(), {1}, IntArrayRef{0}, {1}, 2);
            }),
            "Kernel size can't be greater than actual input size"));
  CHECK(has(error_text<ShapeError>([&] { conv2d(x, w, zeros({5}), {1}, IntArrayRef{0}, {1}, 2); }),
            "expected bias to be 1-dimensional with 6 elements"));
  CHECK(has(error_text<DTypeError>([&] { conv2d(x, w.to(DType::Float64), Tensor(), {1}, IntArrayRef{0}, {1}, 2); }),
            "weight"));
  CHECK(
      has(error_text<ValueError>([&] { conv2d(x, w, Tensor(), {0}, IntArrayRef{0}, {1}, 2); }), "non-positive stride"));
  CHECK(has(error_text<ValueError>([&] { conv2d(x, w, Tensor(), {1}, {-1}, {1}, 2); }), "negative padding"));
  CHECK(has(error_text<ValueError>([&] {
              conv2d(x, w, Tensor(), {1, 1, 1}, IntArrayRef{0}, {1}, 2);
            }),
            "stride to be a single integer value or a list of 2 values"));
  CHECK(has(error_text<ShapeError>([&] { conv2d(zeros({5, 5}), w); }), "Expected 3D (unbatched) or 4D (batched)"));
  CHECK(has(error_text<ValueError>([&] { conv2d(x, w, Tensor(), {2}, "same", {1}, 2); }),
            "padding='same' is not supported for strided convolutions"));
  CHECK(has(error_text<ValueError>([&] { conv2d(x, w, Tensor(), {1}, "full", {1}, 2); }),
            "Invalid padding string: 'full'"));
  CHECK(has(error_text<ValueError>([&] {
              conv_transpose2d(zeros({1, 6, 3, 3}), w, Tensor(), {1}, IntArrayRef{0}, {1}, 2);
            }),
            "output padding must be smaller than either stride or dilation"));
  CHECK(has(error_text<DTypeError>([&] { conv2d(x.to(DType::Int64), w.to(DType::Int64)); }), "conv2d"));
}
