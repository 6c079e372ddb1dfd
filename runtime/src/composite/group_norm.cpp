// group_norm over native_layer_norm's fused kernels: [N, C, *] seen as N * group rows of
// (C / group) * prod(*) contiguous values, normalized as layer_norm's rows (its mean and rstd are
// group_norm's, [N, group]), then scaled and shifted per channel. Autograd records the parts.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/native_group_norm.h"
#include "kiln/gen/api/native_layer_norm.h"
#include "kiln/gen/api/reshape.h"

namespace kiln::composite {

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  const char* op = "native_group_norm";
  KILN_CHECK(group > 0, ValueError, op, "group", "Expected num groups to be greater than 0, got ", group);
  KILN_CHECK(C % group == 0, ShapeError, op, "group",
             "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
             shape_str(input.sizes()), " and num_groups=", group);
  // in 128 bits: N, C and HxW are caller-given and their product may not fit int64
  const __int128 expected = __int128(N) * __int128(C) * __int128(HxW);
  KILN_CHECK(
      N >= 0 && C >= 0 && HxW >= 0 && __int128(input.numel()) == expected && (input.dim() < 2 || input.size(1) == C),
      ShapeError, op, "input", "Expected the input of shape ", shape_str(input.sizes()), " to hold N * C * HxW = ", N,
      " * ", C, " * ", HxW, " values");
  for (const auto& [name, t] : {std::pair<const char*, const Tensor*>{"weight", &weight}, {"bias", &bias}})
    KILN_CHECK(!t->defined() || (t->dim() == 1 && t->numel() == C), ShapeError, op, name, "Expected ", name,
               " to be a vector of size equal to the number of channels in input, but got ", name, " of shape ",
               t->defined() ? shape_str(t->sizes()) : std::string("[]"), " and input of shape ",
               shape_str(input.sizes()));
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
