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

// What dropout applies to x: x * scale (+ shift, alpha dropout only), both broadcasting to x's
// shape; an undefined scale leaves x as it is. p == 1 zeroes every variant, as PyTorch's.
struct DropoutTerms {
  Tensor scale, shift;
};

DropoutTerms dropout_terms(const Tensor& input, double p, bool train, bool per_feature, bool alpha, const char* op) {
  check_p(op, p);
  if (p == 0 || !train || input.numel() == 0) return {};  // PyTorch returns the input itself
  if (p == 1) return {kiln::zeros({}, TensorOptions(input.dtype(), input.device())), Tensor()};
  const Tensor keep = keep_mask(input, p, per_feature, op).to(input.dtype());
  if (!alpha) return {keep * (1.0 / (1.0 - p)), Tensor()};
  // alpha dropout keeps selu's mean and variance: dropped elements become -alpha * scale, then an
  // affine map a * x + b restores the moments (PyTorch's constants)
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  return {keep * a, (keep - 1.0) * (kAlpha * a) + kAlpha * a * p};
}

Tensor dropout_impl(const Tensor& input, double p, bool train, bool per_feature, bool alpha, const char* op) {
  const DropoutTerms t = dropout_terms(input, p, train, per_feature, alpha, op);
  if (!t.scale.defined()) return input;
  return t.shift.defined() ? input * t.scale + t.shift : input * t.scale;
}

// The in-place variants: the terms are drawn before self is touched, so a bad argument leaves it
// as it was.
Tensor& dropout_impl_(Tensor& self, double p, bool train, bool per_feature, bool alpha, const char* op) {
  const DropoutTerms t = dropout_terms(self, p, train, per_feature, alpha, op);
  if (!t.scale.defined()) return self;
  self.mul_(t.scale);
  if (t.shift.defined()) self.add_(t.shift);
  return self;
}

// dropout1d/2d/3d (torch.nn.functional): feature dropout over [N, C, *spatial], or over an input
// without the batch dim (`add_batch_dim`) seen as a batch of one, so one mask entry per channel.
// inplace writes into input through that view and returns input.
Tensor channel_dropout(const Tensor& input, double p, bool training, bool inplace, bool add_batch_dim,
                       const char* op) {
  if (!inplace) {
    if (!add_batch_dim) return dropout_impl(input, p, training, /*per_feature=*/true, /*alpha=*/false, op);
    return dropout_impl(input.unsqueeze(0), p, training, true, false, op).squeeze(0);
  }
  Tensor target = add_batch_dim ? input.unsqueeze(0) : input;
  dropout_impl_(target, p, training, true, false, op);
  return input;
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

Tensor& dropout_(Tensor& self, double p, bool train) {
  return dropout_impl_(self, p, train, /*per_feature=*/false, /*alpha=*/false, "dropout_");
}

Tensor& feature_dropout_(Tensor& self, double p, bool train) {
  return dropout_impl_(self, p, train, /*per_feature=*/true, /*alpha=*/false, "feature_dropout_");
}

Tensor& alpha_dropout_(Tensor& self, double p, bool train) {
  return dropout_impl_(self, p, train, /*per_feature=*/false, /*alpha=*/true, "alpha_dropout_");
}

Tensor& feature_alpha_dropout_(Tensor& self, double p, bool train) {
  return dropout_impl_(self, p, train, /*per_feature=*/true, /*alpha=*/true, "feature_alpha_dropout_");
}

// PyTorch 1.13's functional forms: dropout1d takes [C, L] or [N, C, L] and refuses other ranks;
// dropout2d treats every input as batched (a 3-D one as [N, C, L], as 1.13 does); dropout3d adds
// the batch dim to anything but a 5-D input. (PyTorch's deprecation warnings for other ranks are
// not reproduced: kiln has no warning channel.)
Tensor dropout1d(const Tensor& input, double p, bool training, bool inplace) {
  check_p("dropout1d", p);
  const int64_t dims = input.dim();
  KILN_CHECK(dims == 2 || dims == 3, ShapeError, "dropout1d", "input", "dropout1d: Expected 2D or 3D input, but ",
             "received a ", dims, "D input. Note that dropout1d exists to provide channel-wise dropout on inputs ",
             "with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).");
  return channel_dropout(input, p, training, inplace, /*add_batch_dim=*/dims == 2, "dropout1d");
}

Tensor dropout2d(const Tensor& input, double p, bool training, bool inplace) {
  check_p("dropout2d", p);
  return channel_dropout(input, p, training, inplace, /*add_batch_dim=*/false, "dropout2d");
}

Tensor dropout3d(const Tensor& input, double p, bool training, bool inplace) {
  check_p("dropout3d", p);
  return channel_dropout(input, p, training, inplace, /*add_batch_dim=*/input.dim() != 5, "dropout3d");
}

}  // namespace composite
}  // namespace kiln
