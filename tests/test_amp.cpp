// Loss scaling (kiln/amp.h): the two amp ops with the values of PyTorch 1.13's CUDA kernels
// (aten/src/ATen/native/cuda/AmpKernels.cu; Debian's CPU-only torch has no kernel for them,
// so the expected values below are that kernel's arithmetic, checked with numpy/torch
// rounding), and GradScaler as torch.cuda.amp.GradScaler: skip a step on inf and recover.
#include <doctest/doctest.h>
#include <cmath>
#include <limits>
#include <vector>
#include "test_helpers.h"
#include "kiln/amp.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/_amp_foreach_non_finite_check_and_unscale_.h"
#include "kiln/gen/api/_amp_update_scale_.h"
#include "kiln/gen/api/mul.h"
#include "kiln/optim.h"

using namespace kiln;
using testing::expect_values;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor values(std::vector<double> v, std::vector<int64_t> shape, DType dtype = kFloat32) {
  return from_vector<double>(v, shape).to(dtype);
}
Tensor one(double v, DType dtype = kFloat32) { return values({v}, {1}, dtype); }
}  // namespace

TEST_CASE("amp: _amp_foreach_non_finite_check_and_unscale_ unscales in place and flags inf/NaN") {
  Tensor g32 = values({2, 4, -8, 0.7}, {2, 2});
  Tensor g16 = values({3, 1.5, -0.7}, {3}, kBFloat16);
  Tensor g64 = values({0.5}, {}, kFloat64);
  Tensor found_inf = one(0);
  const Tensor inv_scale = one(1.0 / 3);  // 0.3333333432674408 in float32
  _amp_foreach_non_finite_check_and_unscale_({g32, g16, g64}, found_inf, inv_scale);
  expect_values(found_inf, {1}, {0});
  expect_values(g32, {2, 2}, {0.6666666865348816, 1.3333333730697632, -2.6666667461395264, 0.23333333432674408}, 1e-15);
  // bfloat16: computed in float32, rounded once
  expect_values(g16, {3}, {1.0, 0.5, -0.2333984375}, 0);
  expect_values(g64, {}, {0.5 * 0.3333333432674408}, 1e-15);

  // one tensor with inf and NaN sets the flag; every tensor is still unscaled
  Tensor bad = values({1, kInf, kNaN}, {3});
  Tensor after = values({8}, {1});
  _amp_foreach_non_finite_check_and_unscale_({bad, after}, found_inf, one(0.25));
  expect_values(found_inf, {1}, {1});
  expect_values(bad, {3}, {0.25, kInf, kNaN});
  expect_values(after, {1}, {2});
  // a flag already set stays set; an empty list changes nothing
  _amp_foreach_non_finite_check_and_unscale_({values({1}, {1})}, found_inf, one(1));
  expect_values(found_inf, {1}, {1});
  _amp_foreach_non_finite_check_and_unscale_({}, found_inf, one(1));
}

TEST_CASE("amp: _amp_foreach_non_finite_check_and_unscale_ refuses what the CUDA kernel refuses") {
  Tensor found_inf = one(0);
  Tensor g = values({1, 2}, {2});
  try {
    _amp_foreach_non_finite_check_and_unscale_({g}, found_inf, values({1, 1}, {2}));
    FAIL("a 2-element inv_scale accepted");
  } catch (const ValueError& e) {
    CHECK(e.op() == "_amp_foreach_non_finite_check_and_unscale_");
    CHECK(e.arg() == "inv_scale");
    CHECK(testing::has(e.what(), "inv_scale must be a 1-element tensor."));
  }
  Tensor f64 = one(0, kFloat64);
  CHECK(testing::has(
      testing::error_text<DTypeError>([&] { _amp_foreach_non_finite_check_and_unscale_({g}, f64, one(1)); }),
      "found_inf must be a float tensor."));
  CHECK_THROWS_AS(_amp_foreach_non_finite_check_and_unscale_({values({1}, {1}, kInt64)}, found_inf, one(1)),
                  DTypeError);
  expect_values(g, {2}, {1, 2});  // nothing was written
}

TEST_CASE("amp: _amp_update_scale_ backs off on inf, grows every growth_interval clean steps") {
  Tensor scale = one(4);
  Tensor tracker = values({0}, {1}, kInt32);
  auto update = [&](double found, double growth = 2.0, int64_t interval = 3) {
    Tensor& r = _amp_update_scale_(scale, tracker, one(found), growth, 0.5, interval);
    CHECK(r.is_same(scale));
  };
  update(0);
  expect_values(scale, {1}, {4});
  expect_values(tracker, {1}, {1});
  update(0);
  expect_values(tracker, {1}, {2});
  update(0);  // the third clean step: grow, restart the count
  expect_values(scale, {1}, {8});
  expect_values(tracker, {1}, {0});
  update(0);
  update(1);  // inf: back off, restart
  expect_values(scale, {1}, {4});
  expect_values(tracker, {1}, {0});
  // the product is formed in double and rounded once: float(3 * 1.1), not float(3) * float(1.1)
  scale.fill_(3);
  update(0, 1.1, 1);
  expect_values(scale, {1}, {3.299999952316284}, 0);
  // never grows into inf
  scale.fill_(3e38);
  update(0, 2.0, 1);
  expect_values(scale, {1}, {double(3e38f)}, 0);
  expect_values(tracker, {1}, {0});
  Tensor int64_tracker = values({0}, {1}, kInt64);
  CHECK(testing::has(
      testing::error_text<DTypeError>([&] { _amp_update_scale_(scale, int64_tracker, one(0), 2, 0.5, 1); }),
      "growth_tracker must be an int tensor."));
}

TEST_CASE("amp: GradScaler skips the step on an injected inf, backs off, and recovers") {
  Tensor w = values({1, -2}, {2});
  w.requires_grad_(true);
  optim::SGD opt({w}, {/*lr=*/0.5});
  GradScaler scaler({/*init_scale=*/1024, /*growth_factor=*/2, /*backoff_factor=*/0.5, /*growth_interval=*/2});
  CHECK(scaler.get_scale() == 1024);
  auto iteration = [&](std::vector<double> x) {
    opt.zero_grad();
    Tensor loss = (w * values(x, {2})).sum();
    Tensor scaled = scaler.scale(loss);
    expect_values(scaled, {1}, {loss.item<double>() * scaler.get_scale()});
    scaled.backward();
    bool stepped = scaler.step(opt);
    scaler.update();
    return stepped;
  };
  CHECK(iteration({1, 2}));  // gradient (1, 2) after unscaling
  expect_values(w, {2}, {0.5, -3});
  CHECK(scaler.get_scale() == 1024);
  CHECK_FALSE(iteration({kInf, 1}));  // skipped: w as it was, the scale halves
  expect_values(w, {2}, {0.5, -3});
  CHECK(scaler.get_scale() == 512);
  CHECK(iteration({2, 2}));
  expect_values(w, {2}, {-0.5, -4});
  CHECK(scaler.get_scale() == 512);
  CHECK(iteration({2, 2}));  // two clean steps: the scale grows back
  expect_values(w, {2}, {-1.5, -5});
  CHECK(scaler.get_scale() == 1024);

  // state for resume
  std::optional<GradScalerState> state = scaler.state_dict();
  REQUIRE(state);
  CHECK(state->scale == 1024);
  CHECK(state->growth_tracker == 0);
  CHECK(state->growth_interval == 2);
  GradScaler resumed;
  resumed.load_state_dict(state);
  CHECK(resumed.get_scale() == 1024);
  CHECK(resumed.get_growth_interval() == 2);
  scaler.update(256.0);
  CHECK(scaler.get_scale() == 256);
}

TEST_CASE("amp: GradScaler's call order and settings are checked as PyTorch's") {
  Tensor w = values({1}, {1});
  w.requires_grad_(true);
  optim::SGD opt({w}, {/*lr=*/1});
  GradScaler scaler;
  CHECK(scaler.get_scale() == 65536);
  scaler.scale(w.sum()).backward();
  scaler.unscale_(opt);
  expect_values(w.grad(), {1}, {1});
  CHECK(testing::has(testing::error_text<ValueError>([&] { scaler.unscale_(opt); }),
                     "unscale_() has already been called on this optimizer since the last update()."));
  CHECK(scaler.step(opt));
  CHECK(testing::has(testing::error_text<ValueError>([&] { scaler.step(opt); }),
                     "step() has already been called since the last update()."));
  scaler.update();
  CHECK(testing::has(testing::error_text<ValueError>([&] {
                       GradScaler({65536, /*growth_factor=*/0.9});
                     }),
                     "The growth factor must be > 1.0."));
  CHECK(testing::has(testing::error_text<ValueError>([&] { scaler.load_state_dict(std::nullopt); }),
                     "The source state dict is empty"));
  GradScaler fresh;
  CHECK(testing::has(testing::error_text<ValueError>([&] { fresh.step(opt); }), "but _scale is None"));

  // disabled: scale() hands back the outputs, step() just steps
  GradScaler off({65536, 2, 0.5, 2000, /*enabled=*/false});
  Tensor loss = w.sum();
  CHECK(off.scale(loss).is_same(loss));
  CHECK(off.get_scale() == 1.0);
  CHECK_FALSE(off.state_dict().has_value());
  opt.zero_grad();
  loss.backward();
  CHECK(off.step(opt));
  expect_values(w, {1}, {-1});
}

TEST_CASE("amp: the unscale op in every dtype, on non-contiguous tensors, with inf/NaN injected, one pass") {
  for (DType dtype : {kFloat16, kBFloat16, kFloat32, kFloat64}) {
    CAPTURE(std::string(dtype_name(dtype)));
    // every other element of a wider tensor, and a transposed copy: each as its contiguous copy
    Tensor wide = values({1, 9, 2, 9, -4, 9, 8, 9}, {8}, dtype);
    Tensor every_other = wide.reshape({4, 2}).select(1, 0);  // 1, 2, -4, 8
    Tensor transposed = values({1, 2, 3, 4, 5, 6}, {2, 3}, dtype).transpose(0, 1);
    Tensor found_inf = one(0);
    _amp_foreach_non_finite_check_and_unscale_({every_other, transposed}, found_inf, one(0.5));
    expect_values(found_inf, {1}, {0});
    expect_values(every_other, {4}, {0.5, 1, -2, 4}, 0);
    expect_values(transposed, {3, 2}, {0.5, 2, 1, 2.5, 1.5, 3}, 0);
    expect_values(wide, {8}, {0.5, 9, 1, 9, -2, 9, 4, 9}, 0);  // only the selected elements were written
    Tensor nan_slice = values({1, kNaN, 3, 4}, {2, 2}, dtype).transpose(0, 1);
    _amp_foreach_non_finite_check_and_unscale_({nan_slice}, found_inf, one(2));
    expect_values(found_inf, {1}, {1});
    expect_values(nan_slice, {2, 2}, {2, 6, kNaN, 8}, 0);
  }
}

TEST_CASE("amp: the amp ops by name, and their refusals name the op and the argument") {
  Tensor g = values({2, kInf}, {2});
  Tensor found_inf = one(0);
  Value r =
      call("_amp_foreach_non_finite_check_and_unscale_", {Value(TensorList{g}), Value(found_inf), Value(one(0.5))});
  CHECK(r.is_none());
  expect_values(g, {2}, {1, kInf});
  expect_values(found_inf, {1}, {1});
  Tensor scale = one(4), tracker = values({0}, {1}, kInt32);
  call("_amp_update_scale_", {Value(scale), Value(tracker), Value(one(1)), Value(2.0), Value(0.5), Value(int64_t(5))});
  expect_values(scale, {1}, {2});
  try {
    Tensor int_found = values({0}, {1}, kInt32);
    _amp_foreach_non_finite_check_and_unscale_({g}, int_found, one(1));
    FAIL("an int32 found_inf accepted");
  } catch (const DTypeError& e) {
    CHECK(e.op() == "_amp_foreach_non_finite_check_and_unscale_");
    CHECK(e.arg() == "found_inf");
  }
  try {
    Tensor two_scale = values({1, 1}, {2});
    _amp_update_scale_(two_scale, tracker, one(0), 2, 0.5, 1);
    FAIL("a 2-element scale accepted");
  } catch (const ValueError& e) {
    CHECK(e.op() == "_amp_update_scale_");
    CHECK(e.arg() == "self");
    CHECK(testing::has(e.what(), "current_scale must be a 1-element tensor."));
  }
}
