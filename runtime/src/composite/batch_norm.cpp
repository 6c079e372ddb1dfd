// batch_norm and instance_norm. In training, the fused op _batch_norm_training (statistics,
// normalization and the affine step; its backward _batch_norm_training_backward), which serves
// CUDA, for now, by layer_norm's kernels over a copy with one row per channel (its dispatch: in
// ops/normalization.yaml). 16-bit inputs are normalized in float32. The running statistics are updated in place
// without history: running = (1 - momentum) * running + momentum * batch, with the unbiased
// batch variance, as PyTorch's.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_batch_norm_training.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/native_batch_norm.h"
#include "kiln/gen/api/native_layer_norm.h"
#include "kiln/gen/api/repeat.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/rsqrt.h"
#include "kiln/gen/api/square.h"

namespace kiln::composite {
namespace {

void check_channels(const char* op, const char* name, const Tensor& t, int64_t channels) {
  if (!t.defined()) return;
  KILN_CHECK(t.numel() == channels, ShapeError, op, name, name, " should contain ", channels, " elements not ",
             t.numel());
}

// [C] -> [C, 1, ..., 1], broadcasting over an input of `dim` dims along dim 1.
Tensor per_channel(const Tensor& t, int64_t dim) {
  DimVector shape(size_t(std::max<int64_t>(dim - 1, 1)), 1);
  shape[0] = t.numel();
  return kiln::reshape(t, shape);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  const char* op = "native_batch_norm";
  KILN_CHECK(input.dim() >= 2, ShapeError, op, "input", "expected 2 or more dimensions (got ", input.dim(), ")");
  const int64_t C = input.size(1);
  check_channels(op, "weight", weight, C);
  check_channels(op, "bias", bias, C);
  check_channels(op, "running_mean", running_mean, C);
  check_channels(op, "running_var", running_var, C);
  KILN_CHECK(running_mean.defined() == running_var.defined(), ValueError, op, "running_var",
             "running_mean and running_var must be given together");
  const DType dt = input.dtype();
  const DType stat_dtype = running_mean.defined() ? running_mean.dtype() : dt;
  Tensor y, save_mean, save_invstd;
  if (training) {
    const bool reduced = dt == DType::Float16 || dt == DType::BFloat16;
    const int64_t n = C > 0 ? input.numel() / C : 0;
    // the fused op (statistics, normalization and the affine step in one), in float32 for 16-bit
    // inputs; weight and bias in the compute dtype. Its dispatch: serves CUDA by
    // batch_norm_channel_rows below until the device suite has run its CUDA kernel.
    const DType cdt = reduced ? DType::Float32 : dt;
    auto in_compute = [&](const Tensor& t) { return t.defined() && t.dtype() != cdt ? t.to(cdt) : t; };
    auto [out, mean, invstd] = kiln::_batch_norm_training(in_compute(input), in_compute(weight), in_compute(bias), eps);
    y = reduced ? out.to(dt) : out;
    save_mean = mean;
    save_invstd = invstd;
    if (running_mean.defined() && n > 0) {  // an empty batch leaves the running statistics alone
      NoGradGuard no_grad;
      const Tensor batch_var =
          (kiln::square(save_invstd).reciprocal() - eps) * (double(n) / double(std::max<int64_t>(n - 1, 1)));
      Tensor rm = running_mean, rv = running_var;
      rm.copy_(rm * (1 - momentum) + save_mean.detach().to(rm.dtype()) * momentum);
      rv.copy_(rv * (1 - momentum) + batch_var.to(rv.dtype()) * momentum);
    }
    save_mean = save_mean.to(stat_dtype).detach();  // statistics carry no gradient (PyTorch's)
    save_invstd = save_invstd.to(stat_dtype).detach();
  } else {
    KILN_CHECK(running_mean.defined(), ValueError, op, "running_mean",
               "running_mean must be defined in evaluation mode");
    const Tensor scale = kiln::rsqrt(running_var + eps);
    y = (input - per_channel(running_mean, input.dim()).to(dt)) * per_channel(scale, input.dim()).to(dt);
    if (weight.defined()) y = y * per_channel(weight, input.dim());
    if (bias.defined()) y = y + per_channel(bias, input.dim());
    save_mean = kiln::empty({0}, TensorOptions(stat_dtype, input.device()));
    save_invstd = kiln::empty({0}, TensorOptions(stat_dtype, input.device()));
  }
  return {y, save_mean, save_invstd};
}

// _batch_norm_training where its dispatch: says composite (CUDA, until the device suite has run
// kernels/cuda/batch_norm.cu): each channel moved into one contiguous row of layer_norm's kernels
// (a copy) and back, then the affine step; autograd records the parts.
std::tuple<Tensor, Tensor, Tensor> batch_norm_channel_rows(const Tensor& input, const Tensor& weight,
                                                           const Tensor& bias, double eps) {
  const int64_t C = input.size(1);
  const int64_t n = C > 0 ? input.numel() / C : 0;
  Tensor rows = kiln::reshape(input.transpose(0, 1), {C, -1});
  auto [normed, mean, rstd] = kiln::native_layer_norm(rows, {n}, Tensor(), Tensor(), eps);
  DimVector moved = input.sizes();
  std::swap(moved[0], moved[1]);
  Tensor y = kiln::reshape(normed, moved).transpose(0, 1).contiguous();
  if (weight.defined()) y = y * per_channel(weight, input.dim());
  if (bias.defined()) y = y + per_channel(bias, input.dim());
  return {y, kiln::reshape(mean, {C}), kiln::reshape(rstd, {C})};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool /*cudnn_enabled*/) {
  if (training && input.dim() >= 2) {
    const int64_t per_channel_count = input.numel() / std::max<int64_t>(input.size(1), 1);
    KILN_CHECK(per_channel_count != 1, ValueError, "batch_norm", "input",
               "Expected more than 1 value per channel when training, got input size ", shape_str(input.sizes()));
  }
  return std::get<0>(kiln::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

// Each (sample, channel) normalized on its own: batch_norm over [1, N * C, *] with the per-channel
// parameters repeated N times; the running statistics take the mean over the samples.
Tensor instance_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                     const Tensor& running_var, bool use_input_stats, double momentum, double eps,
                     bool /*cudnn_enabled*/) {
  const char* op = "instance_norm";
  KILN_CHECK(input.dim() >= 2, ShapeError, op, "input", "expected 2 or more dimensions (got ", input.dim(), ")");
  const int64_t N = input.size(0), C = input.size(1);
  check_channels(op, "weight", weight, C);
  check_channels(op, "bias", bias, C);
  check_channels(op, "running_mean", running_mean, C);
  check_channels(op, "running_var", running_var, C);
  KILN_CHECK(use_input_stats || running_mean.defined(), ValueError, op, "running_mean",
             "Expected running_mean and running_var to be defined when use_input_stats is false");
  DimVector folded;  // [1, N * C, *]
  folded.push_back(1);
  folded.push_back(N * C);
  for (int64_t d = 2; d < input.dim(); ++d) folded.push_back(input.size(d));
  const Tensor x = kiln::reshape(input, folded);
  const Tensor w = weight.defined() ? kiln::repeat(weight, {N}) : Tensor();
  const Tensor b = bias.defined() ? kiln::repeat(bias, {N}) : Tensor();
  Tensor rm, rv;
  if (running_mean.defined()) {
    NoGradGuard no_grad;
    rm = kiln::repeat(running_mean, {N});
    rv = kiln::repeat(running_var, {N});
  }
  Tensor y = std::get<0>(kiln::native_batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps));
  if (running_mean.defined() && use_input_stats) {
    NoGradGuard no_grad;
    Tensor out_mean = running_mean, out_var = running_var;
    out_mean.copy_(kiln::mean(kiln::reshape(rm, {N, C}), {0}));
    out_var.copy_(kiln::mean(kiln::reshape(rv, {N, C}), {0}));
  }
  return kiln::reshape(y, input.sizes());
}

}  // namespace kiln::composite
