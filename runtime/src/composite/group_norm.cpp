// native_group_norm and group_norm over the fused op _group_norm_fused (statistics, normalization
// and the affine step in one op; its backward _group_norm_fused_backward), 16-bit inputs
// normalized in float32. Its dispatch: (ops/normalization.yaml) serves CUDA, for now, by
// group_norm_rows below: its CUDA kernel, kernels/cuda/group_norm.cu, is compiled but has not yet
// run on a device; one registry line switches to it once the device suite has.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/meta/normalization.h"
#include "kiln/gen/api/_group_norm_fused.h"
#include "kiln/gen/api/native_group_norm.h"
#include "kiln/gen/api/native_layer_norm.h"
#include "kiln/gen/api/reshape.h"

namespace kiln::composite {

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  meta::check_group_norm("native_group_norm", input, weight, bias, N, C, HxW, group);
  const DType dt = input.dtype();
  const bool reduced = dt == DType::Float16 || dt == DType::BFloat16;
  // the fused op, in float32 for 16-bit inputs (weight and bias in the compute dtype); the
  // statistics come back in the input's dtype, as PyTorch's
  const DType cdt = reduced ? DType::Float32 : dt;
  auto in_compute = [&](const Tensor& t) { return t.defined() && t.dtype() != cdt ? t.to(cdt) : t; };
  auto [out, mean, rstd] =
      kiln::_group_norm_fused(in_compute(input), in_compute(weight), in_compute(bias), N, C, HxW, group, eps);
  if (!reduced) return {out, mean, rstd};
  return {out.to(dt), mean.to(dt), rstd.to(dt)};
}

// _group_norm_fused where its dispatch: says composite (CUDA, until the device suite has run
// kernels/cuda/group_norm.cu): [N, C, *] seen as N * group rows of (C / group) * prod(*)
// contiguous values, normalized as layer_norm's rows (whose mean and rstd are group_norm's,
// [N, group]), then scaled and shifted per channel; autograd records the parts.
std::tuple<Tensor, Tensor, Tensor> group_norm_rows(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                   int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  const int64_t row = (C / group) * HxW;
  auto [normed, mean, rstd] =
      kiln::native_layer_norm(kiln::reshape(input, {N * group, row}), {row}, Tensor(), Tensor(), eps);
  Tensor y = kiln::reshape(normed, input.sizes());
  DimVector channel_shape(size_t(std::max<int64_t>(input.dim() - 1, 1)), 1);
  channel_shape[0] = C;
  if (weight.defined()) y = y * kiln::reshape(weight, channel_shape);
  if (bias.defined()) y = y + kiln::reshape(bias, channel_shape);
  return {y, kiln::reshape(mean, {N, group}), kiln::reshape(rstd, {N, group})};
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool /*cudnn_enabled*/) {
  KILN_CHECK(input.dim() >= 2, ShapeError, "group_norm", "input",
             "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t HxW = N * C == 0 ? 0 : input.numel() / (N * C);
  return std::get<0>(kiln::native_group_norm(input, weight, bias, N, C, HxW, num_groups, eps));
}

}  // namespace kiln::composite
