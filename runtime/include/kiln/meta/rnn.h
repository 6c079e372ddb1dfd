#ifndef KILN_RUNTIME_INCLUDE_KILN_META_RNN_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_RNN_H_
// Meta steps of the fused recurrent cells (`meta: rnn_cell`, ops/rnn.yaml): B rows of H hidden
// units with G gates each (LSTM 4: i, f, g, o; GRU 3: r, z, n), gates laid out [B, G * H] as
// PyTorch's. The workspaces are ATen's: LSTM [B, 4H] of the activated gates, GRU [B, 5H] of
// r, z, n, hx and hn = W_hn h + b_hn. Kernels get the plan and contiguous tensors, e.g.
//   void kiln::<backend>::_thnn_fused_lstm_cell(const meta::RnnCellPlan& plan, const TensorBase& hy,
//       const TensorBase& cy, const TensorBase& workspace, const TensorBase& input_gates,
//       const TensorBase& hidden_gates, const TensorBase& cx, const TensorBase& input_bias,
//       const TensorBase& hidden_bias)
// where an omitted bias (or an omitted gradient of the LSTM backward) is an undefined tensor.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct RnnCellPlan {
  int64_t batch = 0, hidden = 0;
  int64_t gates = 4;          // per hidden unit: 4 (LSTM) or 3 (GRU)
  bool has_bias = false;      // the LSTM backward sums the gates' gradient into grad_bias
  DimVector sizes;            // the first result's
  DimVector hidden_sizes;     // [B, H]: hy, cy, grad_cx, grad_hx
  DimVector gates_sizes;      // [B, G * H]: the gates' gradients
  DimVector workspace_sizes;  // [B, 4H] (LSTM) or [B, 5H] (GRU)
  DimVector bias_sizes;       // [4H] when has_bias, else [0]
  DType dtype = DType::Float32;
};

// _thnn_fused_lstm_cell and _thnn_fused_gru_cell (the op's name says which): gates [B, G * H],
// the state (cx or hx) [B, H], the optional biases [G * H].
RnnCellPlan rnn_cell(const char* op, const TensorBase& input_gates, const TensorBase& hidden_gates,
                     const TensorBase& state, const TensorBase& input_bias, const TensorBase& hidden_bias);
// _thnn_fused_lstm_cell_backward_impl.
RnnCellPlan rnn_cell(const char* op, const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& cx,
                     const TensorBase& cy, const TensorBase& workspace, bool has_bias);
// _thnn_fused_gru_cell_backward_impl.
RnnCellPlan rnn_cell(const char* op, const TensorBase& grad_hy, const TensorBase& workspace);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_RNN_H_
