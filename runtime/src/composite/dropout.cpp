// Dropout: masks drawn from kiln's Philox generator (rand in float32 on the input's device, so a
// saved generator state replays the same mask and CPU and CUDA draw the same one for one seed).
// An element is kept where its uniform draw is below 1 - p, and scaled by 1 / (1 - p).
#include <cmath>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/dropout_mask.h"
#include "kiln/gen/api/lt.h"
#include "kiln/gen/api/native_dropout.h"

namespace kiln {

Tensor dropout_keep_mask(IntArrayRef sizes, double p, Device device, Generator* generator) {
  NoGradGuard no_grad;
  return kiln::lt(kiln::rand(sizes, TensorOptions(DType::Float32, device), generator), wrapped_scalar(1.0 - p));
}

namespace composite {
namespace {

void check_p(const char* op, double p) {
  KILN_CHECK(p >= 0 && p <= 1, ValueError, op, "p", "dropout probability has to be between 0 and 1, but got ", p);
}

// The keep mask (bool) of `sizes`: one draw per element, or per (sample, channel) for the feature
// variants, whose mask broadcasts over the remaining dims.
Tensor keep_mask(const Tensor& input, double p, bool per_feature, const char* op) {
  DimVector sizes = input.sizes();
  if (per_feature) {
    KILN_CHECK(input.dim() >= 2, ShapeError, op, "input",
               "Feature dropout requires at least 2 dimensions in the input");
    for (int64_t d = 2; d < input.dim(); ++d) sizes[size_t(d)] = 1;
  }
  return dropout_keep_mask(sizes, p, input.device());
}

Tensor dropout_impl(const Tensor& input, double p, bool train, bool per_feature, bool alpha, const char* op) {
  check_p(op, p);
  if (p == 0 || !train || input.numel() == 0) return input;  // PyTorch returns the input itself
  if (p == 1 && !alpha) return input * kiln::zeros({}, TensorOptions(input.dtype(), input.device()));
  const Tensor keep = keep_mask(input, p, per_feature, op).to(input.dtype());
  if (!alpha) return input * (keep * (1.0 / (1.0 - p)));
  // alpha dropout keeps selu's mean and variance: dropped elements become -alpha * scale, then an
  // affine map a * x + b restores the moments (PyTorch's constants)
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  const Tensor b = (keep - 1.0) * (kAlpha * a) + kAlpha * a * p;
  return input * (keep * a) + b;
}

}  // namespace

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  check_p("native_dropout", p);
  if (train.has_value() && !*train)
    return {input.clone(), kiln::ones(input.sizes(), TensorOptions(DType::Bool, input.device()))};
  if (p == 1)
    return {input * kiln::zeros({}, TensorOptions(input.dtype(), input.device())),
            kiln::zeros(input.sizes(), TensorOptions(DType::Bool, input.device()))};
  Tensor keep = keep_mask(input, p, /*per_feature=*/false, "native_dropout");
  return {input * (keep.to(input.dtype()) * (1.0 / (1.0 - p))), keep};
}

Tensor dropout(const Tensor& input, double p, bool train) {
  check_p("dropout", p);
  if (!train || input.numel() == 0) return input;
  return std::get<0>(kiln::native_dropout(input, p, train));
}

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return dropout_impl(input, p, train, /*per_feature=*/true, /*alpha=*/false, "feature_dropout");
}

Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  return dropout_impl(input, p, train, /*per_feature=*/false, /*alpha=*/true, "alpha_dropout");
}

Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  return dropout_impl(input, p, train, /*per_feature=*/true, /*alpha=*/true, "feature_alpha_dropout");
}

}  // namespace composite
}  // namespace kiln
