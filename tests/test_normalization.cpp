// layer_norm (native_layer_norm's fused kernels and the create_graph path of its backward) and
// rms_norm beyond the generated tests: values and gradients against PyTorch 1.13 (float64, computed
// with torch.nn.functional.layer_norm and .backward), precision for rows with a large mean,
// empty inputs, and PyTorch's errors.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/batch_norm.h"
#include "kiln/gen/api/group_norm.h"
#include "kiln/gen/api/instance_norm.h"
#include "kiln/gen/api/layer_norm.h"
#include "kiln/gen/api/local_response_norm.h"
#include "kiln/gen/api/native_layer_norm.h"
#include "kiln/gen/api/rms_norm.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
Tensor x34() { return from_vector<double>({1, 2, 4, -1, 0.5, 0.25, -3, 2, 10, -10, 5, 0}, {3, 4}); }
Tensor w4() { return from_vector<double>({1.5, -0.5, 2, 1}, {4}); }
Tensor b4() { return from_vector<double>({0.1, 0.2, -0.3, 0}, {4}); }
Tensor g34() { return from_vector<double>({1, -2, 0.5, 3, 0, 1, 1, -1, 2, 2, -1, 0.5}, {3, 4}); }

const std::vector<double> kY = {-0.3160245071317106, 0.061325164289429634, 2.4734967142114064, -1.3867483571057027,
                                0.5627733438161757,  0.11430123262663414,  -3.522273653238557, 1.1312237293284297,
                                1.87482377266029,    0.9606387597115529,   0.7141850129487373, -0.1690308354914562};
const std::vector<double> kDx = {-0.1813436712945813, -0.23468083583712973, 0.2133441779200549,   0.2026803292116559,
                                 0.11923250273064939, -0.23846644914382903, 0.047696177193826295, 0.07153776921935334,
                                 0.22988196532236102, 0.052158049025102904, -0.3554476873246134,  0.07340767297714947};
const std::vector<double> kDw = {2.089082025459246, -3.4258568469417616, -1.4248551545407957, -5.375984218391267};
const std::vector<double> kDb = {3.0, 1.0, 0.5, 2.5};
}  // namespace

TEST_CASE("native_layer_norm: output, mean and rstd as PyTorch's, with their shapes") {
  auto [y, mean, rstd] = native_layer_norm(x34(), {4}, w4(), b4(), 1e-5);
  expect_values(y, {3, 4}, kY, 1e-13);
  expect_values(mean, {3, 1}, {1.4999999999999998, -0.0625, 1.25}, 1e-14);
  expect_values(rstd, {3, 1}, {0.5546993428422812, 0.5484721111895416, 0.13522466839316497}, 1e-14);
  auto [y3, mean3, rstd3] = native_layer_norm(zeros({2, 3, 4}), {3, 4}, Tensor(), Tensor(), 1e-5);
  CHECK(mean3.sizes().vec() == std::vector<int64_t>{2, 1, 1});
  CHECK(rstd3.sizes().vec() == std::vector<int64_t>{2, 1, 1});
  expect_values(rstd3, {2, 1, 1}, {1 / std::sqrt(1e-5), 1 / std::sqrt(1e-5)}, 1e-6);
}

TEST_CASE("layer_norm backward: the fused kernel and the create_graph path both give PyTorch's gradients") {
  for (bool create_graph : {false, true}) {
    INFO("create_graph " << create_graph);
    Tensor x = x34().requires_grad_(true), w = w4().requires_grad_(true), b = b4().requires_grad_(true);
    Tensor y = layer_norm(x, {4}, w, b);
    // autograd::grad, not backward: a create_graph gradient kept in a leaf's .grad would hold the
    // graph that saves the leaf (a reference cycle, as in PyTorch)
    TensorList g = autograd::grad({y}, {x, w, b}, {g34()}, std::nullopt, create_graph);
    expect_values(g[0], {3, 4}, kDx, 1e-12);
    expect_values(g[1], {4}, kDw, 1e-12);
    expect_values(g[2], {4}, kDb, 1e-12);
    CHECK(g[0].requires_grad() == create_graph);
  }
}

TEST_CASE("layer_norm: a row with a large mean keeps float32 precision (two passes)") {
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[size_t(i)] = 10000.0f + 0.125f * float(i);
  Tensor y = layer_norm(from_vector<float>(v, {1, 8}), {8});
  // exact: deviations (i - 3.5) / 8, variance 0.08203125
  std::vector<double> expected;
  for (int i = 0; i < 8; ++i) expected.push_back((i - 3.5) * 0.125 / std::sqrt(0.08203125 + 1e-5));
  expect_values(y, {1, 8}, expected, 2e-6);
}

TEST_CASE("layer_norm: 16-bit inputs compute in float32, empty batches are legal") {
  Tensor y = layer_norm(x34().to(DType::BFloat16), {4}, w4().to(DType::BFloat16), b4().to(DType::BFloat16));
  CHECK(y.dtype() == DType::BFloat16);
  expect_values(y, {3, 4}, kY, 2e-2);
  Tensor e = zeros({0, 4}).requires_grad_(true);
  Tensor w = ones({4}).requires_grad_(true);
  Tensor out = layer_norm(e, {4}, w);
  CHECK(out.sizes().vec() == std::vector<int64_t>{0, 4});
  sum(out).backward();
  expect_values(w.grad(), {4}, {0, 0, 0, 0}, 0);
  // empty rows: mean 0 and rstd NaN, as PyTorch's
  auto [ye, me, re] = native_layer_norm(zeros({2, 0}), {0}, Tensor(), Tensor(), 1e-5);
  CHECK(ye.sizes().vec() == std::vector<int64_t>{2, 0});
  expect_values(me, {2, 1}, {0, 0}, 0);
  expect_values(re, {2, 1}, {std::nan(""), std::nan("")}, 0);
}

TEST_CASE("layer_norm: PyTorch's errors name the argument") {
  Tensor x = zeros({2, 3, 4});
  CHECK(has(error_text<ShapeError>([&] { layer_norm(x, {5}); }),
            "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 3, 4]"));
  CHECK(has(error_text<ShapeError>([&] { layer_norm(x, {4}, ones({3})); }),
            "Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
            "normalized_shape = [4]"));
  CHECK(has(error_text<ShapeError>([&] { layer_norm(x, {4}, Tensor(), ones({2})); }), "Expected bias"));
  CHECK(has(error_text<ShapeError>([&] { layer_norm(x, {}); }),
            "Expected normalized_shape to be at least 1-dimensional"));
  CHECK(has(error_text<DTypeError>([&] { layer_norm(x, {4}, ones({4}, DType::Float64)); }), "weight"));
  CHECK(has(error_text<DTypeError>([&] { layer_norm(zeros({2, 4}, DType::Int64), {4}); }), "layer_norm"));
}

TEST_CASE("rms_norm: x / sqrt(mean(x^2) + eps) times weight, eps defaults to the dtype's epsilon") {
  Tensor x = from_vector<double>({3, 4, -1, 1}, {2, 2});
  // rows: rms 3.5355..., 1
  const double r0 = 1 / std::sqrt(12.5 + 1e-3), r1 = 1 / std::sqrt(1 + 1e-3);
  expect_values(rms_norm(x, {2}, from_vector<double>({2, -1}, {2}), 1e-3), {2, 2}, {6 * r0, -4 * r0, -2 * r1, -r1},
                1e-14);
  const double d0 = 1 / std::sqrt(12.5 + 2.220446049250313e-16);
  expect_values(rms_norm(x, {2}), {2, 2},
                {3 * d0, 4 * d0, -1 / std::sqrt(1 + 2.220446049250313e-16), 1 / std::sqrt(1 + 2.220446049250313e-16)},
                1e-15);
  CHECK(has(error_text<ShapeError>([&] { rms_norm(x, {3}); }), "expected input with shape [*, 3]"));
}

namespace {
// [3, 2, 2]: 3 samples, 2 channels, 2 positions
Tensor bn_input() { return from_vector<double>({1, 2, 3, -1, 0.5, 4, -2, 2, 3, 3, 1, 0}, {3, 2, 2}); }
}  // namespace

TEST_CASE("batch_norm: training normalizes with batch statistics and updates the running ones in place") {
  Tensor rm = from_vector<double>({0.5, -0.5}, {2}), rv = from_vector<double>({2, 0.5}, {2});
  Tensor w = from_vector<double>({1.5, -1}, {2}), b = from_vector<double>({0.1, 0.2}, {2});
  Tensor y = batch_norm(bn_input(), w, b, rm, rv, /*training=*/true, /*momentum=*/0.2, 1e-5, true);
  expect_values(y, {3, 2, 2},
                {-1.4416693858439569, -0.20833387716879148, -1.263847599971922, 1.0783085599831534, -2.0583371401815396,
                 2.2583371401815393, 1.6638475999719222, -0.6783085599831533, 1.025001631506374, 1.025001631506374,
                 -0.09276951999438443, 0.49276951999438445},
                1e-12);
  // (1 - 0.2) * running + 0.2 * batch, with the unbiased batch variance
  expect_values(rm, {2}, {0.8500000000000001, -0.30000000000000004}, 1e-12);
  expect_values(rv, {2}, {1.955, 1.1}, 1e-9);
  Tensor ye = batch_norm(bn_input(), w, b, rm, rv, /*training=*/false, 0.2, 1e-5, true);
  expect_values(ye, {3, 2, 2},
                {0.26091925990905074, 1.3337143259693898, -2.946412242669128, 0.8674207787479968, -0.27547827312111883,
                 3.479304458090068, 1.820879034102278, -1.9929539873148467, 2.406509392029729, 2.406509392029729,
                 -1.0394957319605655, -0.08603747660628439},
                1e-9);
}

TEST_CASE("batch_norm: an empty batch in training leaves the running statistics as they were") {
  Tensor rm = from_vector<double>({0.5, -0.5}, {2}), rv = from_vector<double>({2, 0.5}, {2});
  Tensor y = batch_norm(zeros({0, 2, 3}, DType::Float64), Tensor(), Tensor(), rm, rv, true, 0.2, 1e-5, true);
  CHECK(y.sizes().vec() == std::vector<int64_t>{0, 2, 3});
  expect_values(rm, {2}, {0.5, -0.5}, 0);
  expect_values(rv, {2}, {2, 0.5}, 0);
}

TEST_CASE("batch_norm: errors for channel counts, one value per channel, and eval without statistics") {
  Tensor x = zeros({2, 3});
  CHECK(has(
      error_text<ShapeError>([&] { batch_norm(x, Tensor(), Tensor(), zeros({4}), ones({3}), true, 0.1, 1e-5, true); }),
      "running_mean should contain 3 elements not 4"));
  CHECK(has(error_text<ValueError>([&] {
              batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, true);
            }),
            "Expected more than 1 value per channel when training, got input size [1, 3]"));
  CHECK(has(
      error_text<ValueError>([&] { batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false, 0.1, 1e-5, true); }),
      "running_mean must be defined in evaluation mode"));
}

TEST_CASE("group_norm, instance_norm and local_response_norm against PyTorch") {
  Tensor g = arange(12, DType::Float64).reshape({1, 4, 3}).pow(1.5);
  expect_values(group_norm(g, 2), {1, 4, 3},
                {-1.1977903031331727, -0.9429857526229817, -0.4770942009613877, 0.1262129793170307, 0.8406461009483555,
                 1.6510111764521567, -1.4035429274784552, -0.8905929569672187, -0.339562416556675, 0.24707848693197876,
                 0.8672862316400084, 1.5193335824303624},
                1e-12);
  CHECK(has(error_text<ShapeError>([&] {
              group_norm(zeros({2, 3, 4}), 2);
            }),
            "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 3, 4] and "
            "num_groups=2"));
  Tensor rm = zeros({2}, DType::Float64), rv = ones({2}, DType::Float64);
  Tensor yi = instance_norm(bn_input(), Tensor(), Tensor(), rm, rv, /*use_input_stats=*/true, 0.5, 1e-5, true);
  expect_values(
      yi, {3, 2, 2},
      {-0.9999800005999799, 0.9999800005999799, 0.9999987500023437, -0.9999987500023437, -0.9999983673509371,
       0.9999983673509372, -0.9999987500023437, 0.9999987500023437, 0.0, 0.0, 0.9999800005999799, -0.9999800005999799},
      1e-9);
  expect_values(rm, {2}, {1.125, 0.25}, 1e-12);
  expect_values(rv, {2}, {1.6041666666666667, 3.25}, 1e-9);
  expect_values(local_response_norm(bn_input(), 2), {3, 2, 2},
                {0.9999625016405497, 1.999700052490377, 2.9988754919620195, -0.9998125410062276, 0.49999531255126894,
                 3.9976016787689233, -1.9996813092560357, 1.9985013112980021, 2.9989878985074925, 2.9989878985074925,
                 0.9996251639873398, 0.0},
                1e-12);
}
