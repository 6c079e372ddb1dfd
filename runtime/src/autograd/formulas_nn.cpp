// Backward helpers of the normalization ops (see kiln/autograd/formulas.h).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/_batch_norm_training_backward.h"
#include "kiln/gen/api/_group_norm_fused_backward.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/native_layer_norm_backward.h"
#include "kiln/gen/api/rsqrt.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

namespace kiln {

std::tuple<TensorBase, TensorBase, TensorBase> layer_norm_backward(
    const TensorBase& grad_in, const TensorBase& input_in, IntArrayRef normalized_shape, const TensorBase& mean_in,
    const TensorBase& rstd_in, const TensorBase& weight_in, const TensorBase& bias_in, double eps,
    std::array<bool, 3> mask) {
  const Tensor grad(grad_in), input(input_in), weight(weight_in);
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel
    auto [dx, dw, db] = kiln::native_layer_norm_backward(grad, input, normalized_shape, Tensor(mean_in),
                                                         Tensor(rstd_in), weight, Tensor(bias_in));
    return {mask[0] ? dx : Tensor(), mask[1] && weight.defined() ? dw : Tensor(),
            mask[2] && bias_in.defined() ? db : Tensor()};
  }
  // create_graph: the same gradients from differentiable ops, with the statistics recomputed
  // from input so that the second derivative sees how they depend on it
  const int64_t k = int64_t(normalized_shape.size()), axis = input.dim() - k;
  DimVector row_dims, batch_dims;
  for (int64_t d = 0; d < input.dim(); ++d) (d >= axis ? row_dims : batch_dims).push_back(d);
  const Tensor mu = kiln::mean(input, row_dims.ref(), /*keepdim=*/true);
  const Tensor rs = kiln::rsqrt(kiln::var(input, row_dims.ref(), Scalar(0), /*keepdim=*/true) + eps);
  const Tensor xhat = (input - mu) * rs;
  Tensor dx, dw, db;
  if (mask[0]) {
    const Tensor g = weight.defined() ? grad * weight : grad;
    dx = rs * (g - kiln::mean(g, row_dims.ref(), true) - xhat * kiln::mean(g * xhat, row_dims.ref(), true));
  }
  if (mask[1] && weight.defined()) dw = kiln::sum(grad * xhat, batch_dims.ref());
  if (mask[2] && bias_in.defined()) db = kiln::sum(grad, batch_dims.ref());
  return {dx, dw, db};
}

std::tuple<TensorBase, TensorBase, TensorBase> batch_norm_training_backward(
    const TensorBase& grad_in, const TensorBase& input_in, const TensorBase& weight_in, const TensorBase& mean_in,
    const TensorBase& invstd_in, double eps, std::array<bool, 3> mask) {
  const Tensor grad(grad_in), input(input_in), weight(weight_in);
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel
    auto [dx, dw, db] = kiln::_batch_norm_training_backward(grad, input, weight, Tensor(mean_in), Tensor(invstd_in));
    return {mask[0] ? dx : Tensor(), mask[1] && weight.defined() ? dw : Tensor(), mask[2] ? db : Tensor()};
  }
  // create_graph: differentiable ops over every dim but the channels', the statistics recomputed
  DimVector dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  DimVector channel_shape(size_t(input.dim() - 1), 1);  // [C, 1, ..., 1] against [N, C, *]
  channel_shape[0] = input.size(1);
  const Tensor mu = kiln::mean(input, dims.ref(), /*keepdim=*/true);
  const Tensor rs = kiln::rsqrt(kiln::var(input, dims.ref(), Scalar(0), /*keepdim=*/true) + eps);
  const Tensor xhat = (input - mu) * rs;
  Tensor dx, dw, db;
  if (mask[0]) {
    const Tensor g = weight.defined() ? grad * kiln::reshape(weight, channel_shape) : grad;
    dx = rs * (g - kiln::mean(g, dims.ref(), true) - xhat * kiln::mean(g * xhat, dims.ref(), true));
  }
  if (mask[1] && weight.defined()) dw = kiln::sum(grad * xhat, dims.ref());
  if (mask[2]) db = kiln::sum(grad, dims.ref());
  return {dx, dw, db};
}

std::tuple<TensorBase, TensorBase, TensorBase> group_norm_backward(
    const TensorBase& grad_in, const TensorBase& input_in, const TensorBase& weight_in, const TensorBase& mean_in,
    const TensorBase& rstd_in, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
    std::array<bool, 3> mask) {
  const Tensor grad(grad_in), input(input_in), weight(weight_in);
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel
    auto [dx, dw, db] =
        kiln::_group_norm_fused_backward(grad, input, Tensor(mean_in), Tensor(rstd_in), weight, N, C, HxW, group);
    return {mask[0] ? dx : Tensor(), mask[1] && weight.defined() ? dw : Tensor(), mask[2] ? db : Tensor()};
  }
  // create_graph: differentiable ops over [N, group, (C / group) * HxW] (each (sample, group) a
  // row), the statistics recomputed from input
  const int64_t row = group > 0 ? (C / group) * HxW : 0;
  const DimVector rows{N, group, row}, planes{N, C, HxW}, row_dim{2}, param_dims{0, 2};
  const Tensor xg = kiln::reshape(input, rows.ref());
  const Tensor mu = kiln::mean(xg, row_dim.ref(), /*keepdim=*/true);
  const Tensor rs = kiln::rsqrt(kiln::var(xg, row_dim.ref(), Scalar(0), /*keepdim=*/true) + eps);
  const Tensor xhat = (xg - mu) * rs;
  const Tensor grad_planes = kiln::reshape(grad, planes.ref());
  Tensor dx, dw, db;
  if (mask[0]) {
    const Tensor g = kiln::reshape(weight.defined() ? grad_planes * kiln::reshape(weight, {C, 1}) : grad_planes,
                                   rows.ref());
    dx = kiln::reshape(rs * (g - kiln::mean(g, row_dim.ref(), true) - xhat * kiln::mean(g * xhat, row_dim.ref(), true)),
                       input.sizes());
  }
  if (mask[1] && weight.defined())
    dw = kiln::sum(grad_planes * kiln::reshape(xhat, planes.ref()), param_dims.ref());
  if (mask[2]) db = kiln::sum(grad_planes, param_dims.ref());
  return {dx, dw, db};
}

}  // namespace kiln
