// Convolutions through cuDNN (its heuristics' algorithms, and benchmark mode's) against kiln's
// own CUDA kernels (cuDNN disabled) and the CPU in float64, for every floating dtype: forward,
// transposed, grouped/depthwise, 1-d/2-d/3-d, the input's gradient (autograd) and the weight's
// (convolution_backward_weight). Also: float32 stays off TF32 unless allowed, and the
// deterministic mode repeats bit for bit. Where cuDNN is not built in or does not load, the same
// cases check that the fallback answers alone.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>
#include "kiln/cuda.h"
#include "kiln/determinism.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/convolution.h"
#include "kiln/gen/api/convolution_backward_weight.h"

using namespace kiln;

namespace {

const Device kDev("cuda:0");

struct ConvCase {
  const char* name;
  std::vector<int64_t> input, weight, stride, padding, dilation, output_padding;
  bool transposed;
  int64_t groups;
};

const ConvCase kCases[] = {
    {"2-d 3x3 pad 1", {4, 16, 14, 14}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, 1},
    {"2-d stride 2 dilation 2", {2, 8, 17, 13}, {12, 8, 3, 2}, {2, 2}, {2, 0}, {2, 1}, {0, 0}, false, 1},
    {"2-d groups 4", {3, 16, 9, 9}, {24, 4, 3, 3}, {1, 2}, {1, 1}, {1, 1}, {0, 0}, false, 4},
    {"2-d depthwise", {2, 12, 10, 10}, {12, 1, 5, 5}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, false, 12},
    {"2-d 1x1", {5, 24, 7, 7}, {40, 24, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, false, 1},
    {"1-d", {3, 6, 40}, {10, 6, 5}, {2}, {2}, {1}, {0}, false, 1},
    {"1-d groups 2 dilation 3", {2, 8, 31}, {6, 4, 3}, {1}, {0}, {3}, {0}, false, 2},
    {"3-d", {2, 4, 6, 7, 5}, {6, 4, 3, 3, 3}, {1, 2, 1}, {1, 1, 0}, {1, 1, 1}, {0, 0, 0}, false, 1},
    {"transposed 2-d output_padding", {2, 16, 7, 6}, {16, 8, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, true, 1},
    {"transposed 2-d groups 2 dilation 2", {3, 8, 5, 5}, {8, 3, 3, 3}, {1, 1}, {0, 1}, {2, 2}, {0, 0}, true, 2},
    {"transposed 1-d", {2, 6, 12}, {6, 4, 4}, {3}, {1}, {1}, {2}, true, 1},
    // output_padding at stride 1 (allowed by the dilation) leaves an output row no window
    // reaches: cuDNN refuses the shape, so kiln's kernels run it
    {"transposed 1-d output_padding at stride 1", {1, 4, 4}, {4, 1, 3}, {1}, {0}, {2}, {1}, true, 2},
};

struct Mode {
  const char* name;
  bool cudnn, benchmark;
};
const Mode kModes[] = {
    {"cudnn heuristics", true, false}, {"cudnn benchmark", true, true}, {"kiln kernels", false, false}};

struct Tol {
  double rtol, atol;
};
Tol tol_of(DType d) {
  switch (d) {
    case DType::Float64:
      return {1e-10, 1e-10};
    case DType::Float32:
      return {1e-4, 1e-4};
    case DType::Float16:
      return {1e-2, 5e-2};
    default:
      return {3e-2, 2e-1};  // bfloat16: 8-bit mantissa
  }
}

bool close(const Tensor& got, const Tensor& want, Tol t) {
  if (!got.sizes().equals(want.sizes())) return false;
  std::vector<double> x = got.to(kFloat64).cpu().to_vector<double>(), y = want.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::fabs(x[i] - y[i]) <= t.atol + t.rtol * std::fabs(y[i]))) return false;
  return true;
}

Tensor conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return convolution(x, w, b, c.stride, c.padding, c.dilation, c.transposed, c.output_padding, c.groups);
}

// The case's output, input gradient and weight gradient on `device` for inputs already rounded
// to their dtype; the input gradient through autograd, the weight's through its op.
std::vector<Tensor> run_case(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& grad) {
  Tensor xv = x.detach().clone().requires_grad_(true);
  Tensor out = conv(c, xv, w, b);
  out.backward(grad);
  Tensor gw = convolution_backward_weight(grad, x, w.sizes(), c.stride, c.padding, c.dilation, c.transposed,
                                          c.output_padding, c.groups);
  return {out.detach(), xv.grad(), gw};
}

// Restores cuDNN's switch (and the math modes) however a test case ends.
struct ModesGuard {
  bool cudnn = cuda::cudnn_enabled(), benchmark = cuda::cudnn_benchmark(), tf32 = cuda::allow_tf32(),
       det = are_deterministic_algorithms_enabled();
  ~ModesGuard() {
    cuda::set_cudnn_enabled(cudnn);
    cuda::set_cudnn_benchmark(benchmark);
    cuda::set_allow_tf32(tf32);
    use_deterministic_algorithms(det);
  }
};

}  // namespace

TEST_CASE("cuda cudnn: availability and version") {
  if (cuda::cudnn_is_available()) {
    MESSAGE("cuDNN " << cuda::cudnn_version());
    CHECK(cuda::cudnn_version() / 10000 == 9);
  } else {
    MESSAGE("cuDNN not available: convolutions run kiln's im2col + cuBLAS kernels");
    CHECK(cuda::cudnn_version() == 0);
  }
  CHECK(cuda::cudnn_enabled());  // on by default, as torch.backends.cudnn.enabled
}

TEST_CASE("cuda cudnn: convolutions, their input and weight gradients match the fallback and the CPU") {
  ModesGuard modes;
  manual_seed(41);
  for (const ConvCase& c : kCases) {
    for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
      const std::string name = std::string(c.name) + " " + dtype_name(d);
      CAPTURE(name);
      Tensor x = randn(c.input).to(d), w = (randn(c.weight) * 0.3).to(d);
      const int64_t out_channels = c.transposed ? c.weight[1] * c.groups : c.weight[0];
      Tensor b = randn({out_channels}).to(d);
      Tensor grad = randn(conv(c, x, w, b).sizes()).to(d);
      std::vector<Tensor> want = run_case(c, x.to(kFloat64), w.to(kFloat64), b.to(kFloat64), grad.to(kFloat64));
      for (const Mode& m : kModes) {
        const std::string mode = m.name;
        CAPTURE(mode);
        cuda::set_cudnn_enabled(m.cudnn);
        cuda::set_cudnn_benchmark(m.benchmark);
        std::vector<Tensor> got = run_case(c, x.to(kDev), w.to(kDev), b.to(kDev), grad.to(kDev));
        CHECK(got[0].dtype() == d);
        CHECK(close(got[0], want[0], tol_of(d)));
        CHECK(close(got[1], want[1], tol_of(d)));
        // the weight's gradient sums over the batch and the image: a looser absolute bound
        Tol tw = tol_of(d);
        tw.atol *= 4;
        CHECK(close(got[2], want[2], tw));
      }
    }
  }
}

TEST_CASE("cuda cudnn: float32 stays off TF32 unless allowed") {
  ModesGuard modes;
  manual_seed(42);
  // 576 products per output: TF32's 10-bit inputs would err by ~1e-2 here, float32 by ~1e-5
  Tensor x = randn({8, 64, 16, 16}), w = randn({64, 64, 3, 3});
  Tensor want = convolution(x.to(kFloat64), w.to(kFloat64), Tensor(), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1);
  cuda::set_allow_tf32(false);
  Tensor got = convolution(x.to(kDev), w.to(kDev), Tensor(), {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1);
  const double err = (got.cpu().to(kFloat64) - want).abs().max().item().to_double();
  MESSAGE("float32 max error " << err);
  CHECK(err < 1e-3);
}

TEST_CASE("cuda cudnn: with deterministic algorithms, the gradients repeat bit for bit") {
  ModesGuard modes;
  use_deterministic_algorithms(true);
  manual_seed(43);
  const ConvCase& c = kCases[0];
  Tensor x = randn(c.input).to(kDev), w = randn(c.weight).to(kDev), b = randn({c.weight[0]}).to(kDev);
  Tensor grad = randn({4, 32, 14, 14}).to(kDev);
  std::vector<Tensor> first = run_case(c, x, w, b, grad), second = run_case(c, x, w, b, grad);
  for (size_t i = 0; i < first.size(); ++i)  // float32 values are exact in double
    CHECK(first[i].cpu().to_vector<double>() == second[i].cpu().to_vector<double>());
}
