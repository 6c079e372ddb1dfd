// Backward helpers of the fused recurrent cells (see kiln/autograd/formulas.h).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/_thnn_fused_gru_cell_backward_impl.h"
#include "kiln/gen/api/_thnn_fused_lstm_cell_backward_impl.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/sigmoid.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/tanh.h"

namespace kiln {
namespace {

// gates [B, G * H] -> gate k of [B, H] (a view).
Tensor gate(const Tensor& gates, int64_t k, int64_t H) { return kiln::narrow(gates, 1, k * H, H); }

// a + b, where an undefined b (an omitted bias) adds nothing.
Tensor plus(const Tensor& a, const TensorBase& b) { return b.defined() ? a + Tensor(b) : a; }

Tensor column_sum(const Tensor& g) { return kiln::sum(g, IntArrayRef{0}); }

}  // namespace

std::tuple<TensorBase, TensorBase, TensorBase, TensorBase, TensorBase> lstm_cell_gates_backward(
    const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& input_gates, const TensorBase& hidden_gates,
    const TensorBase& cx_in, const TensorBase& input_bias, const TensorBase& hidden_bias, const TensorBase& cy,
    const TensorBase& workspace, std::array<bool, 5> mask) {
  const bool has_bias = input_bias.defined() || hidden_bias.defined();
  Tensor grad_gates, grad_cx, grad_bias;
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel over the saved workspace
    std::tie(grad_gates, grad_cx, grad_bias) = kiln::_thnn_fused_lstm_cell_backward_impl(
        Tensor(grad_hy), Tensor(grad_cy), Tensor(cx_in), Tensor(cy), Tensor(workspace), has_bias);
  } else {
    // create_graph: the gates and cy recomputed from differentiable ops, then the kernel's math
    const Tensor cx(cx_in), ghy(grad_hy), gcy(grad_cy);
    const int64_t H = cx.size(1);
    const Tensor pre = plus(plus(Tensor(input_gates) + Tensor(hidden_gates), input_bias), hidden_bias);
    const Tensor i = kiln::sigmoid(gate(pre, 0, H)), f = kiln::sigmoid(gate(pre, 1, H));
    const Tensor g = kiln::tanh(gate(pre, 2, H)), o = kiln::sigmoid(gate(pre, 3, H));
    const Tensor tanh_cy = kiln::tanh(f * cx + i * g);
    const Tensor gc = ghy * o * (1 - tanh_cy * tanh_cy) + gcy;
    grad_gates =
        kiln::cat({gc * g * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - g * g), ghy * tanh_cy * o * (1 - o)}, 1);
    grad_cx = gc * f;
    if (has_bias) grad_bias = column_sum(grad_gates);
  }
  return {mask[0] ? grad_gates : Tensor(), mask[1] ? grad_gates : Tensor(), mask[2] ? grad_cx : Tensor(),
          mask[3] ? grad_bias : Tensor(), mask[4] ? grad_bias : Tensor()};
}

std::tuple<TensorBase, TensorBase, TensorBase, TensorBase, TensorBase> gru_cell_gates_backward(
    const TensorBase& grad_hy, const TensorBase& input_gates, const TensorBase& hidden_gates, const TensorBase& hx_in,
    const TensorBase& input_bias, const TensorBase& hidden_bias, const TensorBase& workspace,
    std::array<bool, 5> mask) {
  Tensor grad_in, grad_hidden, grad_hx;
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel over the saved workspace
    std::tie(grad_in, grad_hidden, grad_hx) =
        kiln::_thnn_fused_gru_cell_backward_impl(Tensor(grad_hy), Tensor(workspace));
  } else {
    // create_graph: r, z, n recomputed from differentiable ops, then the kernel's math
    const Tensor hx(hx_in), ghy(grad_hy);
    const int64_t H = hx.size(1);
    const Tensor in = plus(Tensor(input_gates), input_bias), hid = plus(Tensor(hidden_gates), hidden_bias);
    const Tensor r = kiln::sigmoid(gate(in, 0, H) + gate(hid, 0, H));
    const Tensor z = kiln::sigmoid(gate(in, 1, H) + gate(hid, 1, H));
    const Tensor hn = gate(hid, 2, H);
    const Tensor n = kiln::tanh(gate(in, 2, H) + r * hn);
    const Tensor gn = ghy * (1 - z) * (1 - n * n);
    const Tensor gr = gn * hn * r * (1 - r), gz = ghy * (hx - n) * z * (1 - z);
    grad_in = kiln::cat({gr, gz, gn}, 1);
    grad_hidden = kiln::cat({gr, gz, gn * r}, 1);
    grad_hx = ghy * z;
  }
  return {mask[0] ? grad_in : Tensor(), mask[1] ? grad_hidden : Tensor(), mask[2] ? grad_hx : Tensor(),
          mask[3] && input_bias.defined() ? column_sum(grad_in) : Tensor(),
          mask[4] && hidden_bias.defined() ? column_sum(grad_hidden) : Tensor()};
}

}  // namespace kiln
