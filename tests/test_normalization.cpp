// layer_norm (native_layer_norm's fused kernels and the create_graph path of its backward),
// group_norm (_group_norm_fused's kernels: values, gradients, errors, thread counts, 16-bit inputs)
// and rms_norm beyond the generated tests: values and gradients against PyTorch 1.13 (float64, computed
// with torch.nn.functional.layer_norm and .backward), precision for rows with a large mean,
// empty inputs, and PyTorch's errors.
#include <doctest/doctest.h>

#include <omp.h>

#include <cmath>
#include <tuple>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_group_norm_fused.h"
#include "kiln/gen/api/_group_norm_fused_backward.h"
#include "kiln/gen/api/batch_norm.h"
#include "kiln/gen/api/group_norm.h"
#include "kiln/gen/api/instance_norm.h"
#include "kiln/gen/api/layer_norm.h"
#include "kiln/gen/api/local_response_norm.h"
#include "kiln/gen/api/native_group_norm.h"
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

namespace {
// [2, 6, 2] in 3 groups: irregular values, weight and bias per channel, an upstream gradient
Tensor gn_input() {
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back(std::sin(0.7 * i) * 2 + 0.1 * i);
  return from_vector<double>(v, {2, 6, 2});
}
Tensor gn_weight() { return from_vector<double>({0.5, 0.75, 1, 1.25, 1.5, 1.75}, {6}); }
Tensor gn_bias() { return from_vector<double>({-0.2, -0.1, 0, 0.1, 0.2, 0.3}, {6}); }
Tensor gn_grad() {
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back(std::cos(0.3 * i));
  return from_vector<double>(v, {2, 6, 2});
}
// PyTorch 1.13's torch.native_group_norm and group_norm's .backward (float64)
const std::vector<double> kGnY = {
    -1.0134778955736028, -0.20466205873522272, 0.576729059588087,   0.45048087187515123, 1.5554138706328287,
    0.19601356191440897, -0.9132882201536084,  -1.0759960705304383, -1.9384387142148296, -0.38979554015863904,
    1.3981887466626028,  2.384751216773111,    0.46085114045337755, 0.05864953093752125, -0.501819738855873,
    -1.0774312682304754, -1.2106954600189417,  -0.611590333191038,  0.6140600299743396,  1.8637972115381352,
    1.672246665364236,   1.3790056857700232,   -0.10115793041622018, -2.3919698125737474};
const std::vector<double> kGnMean = {1.3964383919375125, -0.38491173128581757, 1.4653510476039087,
                                     1.3137611906070186, 1.302938984014693,    3.0287005631997514};
const std::vector<double> kGnRstd = {1.1650752375046476, 1.0690952409064858, 0.7394768411210361,
                                     0.8284266887974502, 0.7287663337572786, 1.0304285545517382};
const std::vector<double> kGnDx = {
    0.02091427162498971,  -0.0441075906243229,  0.09857568548096862,  -0.07538236648163588, -0.06638029463505533,
    0.1310231543191851,   0.12881862230544175,  -0.19346148198957155, 0.0040315890836282176, 0.016838798977473535,
    -0.06603445797121421, 0.04516406991011335,  0.008774417785898408, 0.01666722658026379,  -0.06954933532456917,
    0.04410769095840689,  -0.033320760057631515, 0.018852265677343216, 0.04923171627079831, -0.03476322189051001,
    -0.07329168562842803, -0.011174846182193887, 0.16092114413347103, -0.07645461232284889};
const std::vector<double> kGnDw = {-3.196635205034308, 1.7383304967999635, 0.24037957269208918,
                                   2.0979620500358975, 3.135023670827053,  -3.270256546173512};
const std::vector<double> kGnDb = {0.33264576859131867, 0.7458889624088637,  0.8985716822968032,
                                   0.7373574614888494,  0.31856306547547475, -0.21151457442542343};

// Deterministic float32 values of a large input (no generator involved).
Tensor gn_large(const std::vector<int64_t>& shape, double phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(std::sin(double(i) * 0.37 + phase) * 3 + 0.5);
  return from_vector<float>(v, shape);
}
}  // namespace

TEST_CASE("_group_norm_fused: output, mean and rstd as PyTorch's native_group_norm") {
  Tensor y, mean, rstd, y2, mean2, rstd2;
  std::tie(y, mean, rstd) = _group_norm_fused(gn_input(), gn_weight(), gn_bias(), 2, 6, 2, 3, 1e-5);
  expect_values(y, {2, 6, 2}, kGnY, 1e-13);
  expect_values(mean, {2, 3}, kGnMean, 1e-14);
  expect_values(rstd, {2, 3}, kGnRstd, 1e-14);
  // native_group_norm on the CPU is the fused op
  std::tie(y2, mean2, rstd2) = native_group_norm(gn_input(), gn_weight(), gn_bias(), 2, 6, 2, 3, 1e-5);
  CHECK(y2.to_vector<double>() == y.to_vector<double>());
  CHECK(mean2.to_vector<double>() == mean.to_vector<double>());
  CHECK(rstd2.to_vector<double>() == rstd.to_vector<double>());
}

TEST_CASE("group_norm backward: the fused kernel and the create_graph path both give PyTorch's gradients") {
  for (bool create_graph : {false, true}) {
    INFO("create_graph " << create_graph);
    Tensor x = gn_input().requires_grad_(true), w = gn_weight().requires_grad_(true),
           b = gn_bias().requires_grad_(true);
    Tensor y = group_norm(x, 3, w, b);
    TensorList g = autograd::grad({y}, {x, w, b}, {gn_grad()}, std::nullopt, create_graph);
    expect_values(g[0], {2, 6, 2}, kGnDx, 1e-12);
    expect_values(g[1], {6}, kGnDw, 1e-12);
    expect_values(g[2], {6}, kGnDb, 1e-12);
    CHECK(g[0].requires_grad() == create_graph);
  }
  // the backward op on its own; without weight its parameter gradients are weight = ones' ones
  Tensor dx, dw, db;
  std::tie(dx, dw, db) = _group_norm_fused_backward(gn_grad(), gn_input(), from_vector<double>(kGnMean, {2, 3}),
                                                    from_vector<double>(kGnRstd, {2, 3}), gn_weight(), 2, 6, 2, 3);
  expect_values(dx, {2, 6, 2}, kGnDx, 1e-11);
  expect_values(dw, {6}, kGnDw, 1e-12);
  expect_values(db, {6}, kGnDb, 1e-12);
  std::tie(dx, dw, db) = _group_norm_fused_backward(gn_grad(), gn_input(), from_vector<double>(kGnMean, {2, 3}),
                                                    from_vector<double>(kGnRstd, {2, 3}), Tensor(), 2, 6, 2, 3);
  CHECK(dx.sizes().vec() == std::vector<int64_t>{2, 6, 2});
  expect_values(dw, {6}, kGnDw, 1e-12);
  expect_values(db, {6}, kGnDb, 1e-12);
}

TEST_CASE("_group_norm_fused: typed errors name the op and the argument") {
  const Tensor x = zeros({2, 6, 5});
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused(x, ones({5}), Tensor(), 2, 6, 5, 3, 1e-5); }),
            "_group_norm_fused: argument 'weight': Expected weight to be a vector of size equal to the number of "
            "channels in input, but got weight of shape [5] and input of shape [2, 6, 5]"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused(x, Tensor(), ones({6, 1}), 2, 6, 5, 3, 1e-5); }),
            "_group_norm_fused: argument 'bias'"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused(x, Tensor(), Tensor(), 2, 6, 5, 4, 1e-5); }),
            "_group_norm_fused: argument 'group': Expected number of channels in input to be divisible by "
            "num_groups, but got input of shape [2, 6, 5] and num_groups=4"));
  CHECK(has(error_text<ValueError>([&] { _group_norm_fused(x, Tensor(), Tensor(), 2, 6, 5, 0, 1e-5); }),
            "_group_norm_fused: argument 'group': Expected num groups to be greater than 0, got 0"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused(x, Tensor(), Tensor(), 2, 6, 4, 3, 1e-5); }),
            "_group_norm_fused: argument 'input': Expected the input of shape [2, 6, 5] to hold N * C * HxW = 2 * "
            "6 * 4 values"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused(x, Tensor(), Tensor(), 6, 2, 5, 1, 1e-5); }),
            "_group_norm_fused: argument 'input'"));
  CHECK(has(error_text<DTypeError>([&] { _group_norm_fused(x, ones({6}, DType::Float64), Tensor(), 2, 6, 5, 3, 1e-5); }),
            "_group_norm_fused: argument 'weight'"));
  CHECK(has(error_text<DTypeError>([&] { _group_norm_fused(x.to(DType::BFloat16), Tensor(), Tensor(), 2, 6, 5, 3, 1e-5); }),
            "_group_norm_fused"));
  CHECK(has(error_text<ValueError>([&] { _group_norm_fused(x, Tensor(), Tensor(), 2, 6, 5, 3, -1.0); }),
            "_group_norm_fused: argument 'eps'"));
  const Tensor stats = ones({2, 3});
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused_backward(zeros({2, 6, 4}), x, stats, stats, Tensor(), 2, 6, 5, 3); }),
            "_group_norm_fused_backward: argument 'grad_out'"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused_backward(x, x, ones({2, 2}), stats, Tensor(), 2, 6, 5, 3); }),
            "_group_norm_fused_backward: argument 'mean'"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused_backward(x, x, stats, ones({3}), Tensor(), 2, 6, 5, 3); }),
            "_group_norm_fused_backward: argument 'rstd'"));
  CHECK(has(error_text<ShapeError>([&] { _group_norm_fused_backward(x, x, stats, stats, ones({3}), 2, 6, 5, 3); }),
            "_group_norm_fused_backward: argument 'weight'"));
  CHECK(has(error_text<DTypeError>([&] {
              _group_norm_fused_backward(x, x, stats.to(DType::Float64), stats, Tensor(), 2, 6, 5, 3);
            }),
            "_group_norm_fused_backward: argument 'mean'"));
  // through native_group_norm the same checks name native_group_norm
  CHECK(has(error_text<ShapeError>([&] { native_group_norm(x, ones({5}), Tensor(), 2, 6, 5, 3, 1e-5); }),
            "native_group_norm: argument 'weight'"));
}

TEST_CASE("group_norm: the fused kernels' results do not depend on the thread count") {
  // 64 channels in 8 groups over odd planes (rows start off vector alignment): [3, 64, 37, 29]
  // (24 blocks, more than one grain of work) and [4, 64, 67, 71] (past 4 MiB, where the outputs
  // are written with non-temporal stores)
  for (int64_t N : {3, 4}) {
    const int64_t H = N == 3 ? 37 : 67, W = N == 3 ? 29 : 71;
    INFO("N " << N);
    const Tensor x = gn_large({N, 64, H, W}, 0.0), g = gn_large({N, 64, H, W}, 1.0);
    const Tensor w = gn_large({64}, 2.0), b = gn_large({64}, 3.0);
    const int before = omp_get_max_threads();
    std::vector<std::vector<float>> runs[3];
    const int counts[3] = {1, 2, 3};
    for (int k = 0; k < 3; ++k) {
      omp_set_num_threads(counts[k]);
      Tensor y, mean, rstd, dx, dw, db;
      std::tie(y, mean, rstd) = _group_norm_fused(x, w, b, N, 64, H * W, 8, 1e-5);
      std::tie(dx, dw, db) = _group_norm_fused_backward(g, x, mean, rstd, w, N, 64, H * W, 8);
      for (const Tensor& t : {y, mean, rstd, dx, dw, db}) runs[k].push_back(t.to_vector<float>());
    }
    omp_set_num_threads(before);
    for (int k = 1; k < 3; ++k) {
      INFO("threads " << counts[k]);
      for (size_t i = 0; i < runs[0].size(); ++i) {
        INFO("result " << i);
        CHECK(runs[k][i] == runs[0][i]);
      }
    }
    // and they are group norm's: against the float64 computation
    const Tensor x64 = x.to(DType::Float64), w64 = w.to(DType::Float64), g64 = g.to(DType::Float64);
    Tensor y64, mean64, rstd64, dx64, dw64, db64;
    std::tie(y64, mean64, rstd64) = _group_norm_fused(x64, w64, b.to(DType::Float64), N, 64, H * W, 8, 1e-5);
    std::tie(dx64, dw64, db64) = _group_norm_fused_backward(g64, x64, mean64, rstd64, w64, N, 64, H * W, 8);
    for (size_t r : {size_t(0), size_t(3)}) {
      INFO("result " << r);
      const std::vector<double> ref = (r == 0 ? y64 : dx64).to_vector<double>();
      double worst = 0, scale = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        worst = std::max(worst, std::fabs(double(runs[0][r][i]) - ref[i]));
        scale = std::max(scale, std::fabs(ref[i]));
      }
      CHECK(worst <= 1e-5 * std::max(scale, 1.0));
    }
  }
}

TEST_CASE("group_norm: float16 and bfloat16 inputs run the fused kernel on float32 copies") {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    INFO(dtype_name(dt));
    const double tol = dt == DType::Float16 ? 5e-3 : 3e-2;
    Tensor x = gn_input().to(dt).requires_grad_(true), w = gn_weight().to(dt).requires_grad_(true),
           b = gn_bias().to(dt).requires_grad_(true);
    Tensor y, mean, rstd;
    std::tie(y, mean, rstd) = native_group_norm(x, w, b, 2, 6, 2, 3, 1e-5);
    CHECK(y.dtype() == dt);
    CHECK(mean.dtype() == dt);
    CHECK(rstd.dtype() == dt);
    // against float64 from the same (rounded) values
    auto wide = [&](const Tensor& t) { return t.detach().to(DType::Float64).requires_grad_(true); };
    Tensor x64 = wide(x), w64 = wide(w), b64 = wide(b), y64, mean64, rstd64;
    std::tie(y64, mean64, rstd64) = native_group_norm(x64, w64, b64, 2, 6, 2, 3, 1e-5);
    expect_values(y, {2, 6, 2}, y64.to_vector<double>(), tol);
    expect_values(mean, {2, 3}, mean64.to_vector<double>(), tol);
    expect_values(rstd, {2, 3}, rstd64.to_vector<double>(), tol);
    const Tensor g = gn_grad().to(dt);
    y.backward(g);
    y64.backward(g.to(DType::Float64));
    CHECK(x.grad().dtype() == dt);
    CHECK(w.grad().dtype() == dt);
    expect_values(x.grad(), {2, 6, 2}, x64.grad().to_vector<double>(), tol);
    expect_values(w.grad(), {6}, w64.grad().to_vector<double>(), tol);
    expect_values(b.grad(), {6}, b64.grad().to_vector<double>(), tol);
  }
}

TEST_CASE("group_norm: empty batches are legal and give zero parameter gradients") {
  Tensor x = zeros({0, 4, 3}).requires_grad_(true);
  Tensor w = ones({4}).requires_grad_(true), b = zeros({4}).requires_grad_(true);
  Tensor y, mean, rstd;
  std::tie(y, mean, rstd) = native_group_norm(x, w, b, 0, 4, 3, 2, 1e-5);
  CHECK(y.sizes().vec() == std::vector<int64_t>{0, 4, 3});
  CHECK(mean.sizes().vec() == std::vector<int64_t>{0, 2});
  sum(y).backward();
  expect_values(w.grad(), {4}, {0, 0, 0, 0}, 0);
  expect_values(b.grad(), {4}, {0, 0, 0, 0}, 0);
  CHECK(x.grad().sizes().vec() == std::vector<int64_t>{0, 4, 3});
}
