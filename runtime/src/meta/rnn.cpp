// Meta steps of the fused recurrent cells (see kiln/meta/rnn.h).
#include <cstring>
#include "kiln/meta/rnn.h"

namespace kiln::meta {
namespace {

// Every tensor of a call shares the first one's dtype and device.
void check_like(const char* op, const char* name, const TensorBase& t, const TensorBase& first) {
  if (!t.defined()) return;
  KILN_CHECK(t.dtype() == first.dtype(), DTypeError, op, name, "expected ", name, " of dtype ",
             dtype_name(first.dtype()), ", got ", dtype_name(t.dtype()));
  KILN_CHECK(t.device() == first.device(), DeviceError, op, name, "expected ", name, " on ", first.device().str(),
             ", got ", t.device().str());
}

void check_sizes(const char* op, const char* name, const TensorBase& t, IntArrayRef want) {
  if (!t.defined()) return;
  KILN_CHECK(t.sizes().equals(want), ShapeError, op, name, "expected ", name, " of size ", shape_str(want), ", got ",
             shape_str(t.sizes()));
}

void size_plan(RnnCellPlan& p, int64_t workspace_gates) {
  p.hidden_sizes = DimVector{p.batch, p.hidden};
  p.gates_sizes = DimVector{p.batch, p.gates * p.hidden};
  p.workspace_sizes = DimVector{p.batch, workspace_gates * p.hidden};
  p.bias_sizes = DimVector{p.has_bias ? p.gates * p.hidden : 0};
}

}  // namespace

RnnCellPlan rnn_cell(const char* op, const TensorBase& input_gates, const TensorBase& hidden_gates,
                     const TensorBase& state, const TensorBase& input_bias, const TensorBase& hidden_bias) {
  const bool lstm = std::strstr(op, "lstm") != nullptr;
  const char* state_name = lstm ? "cx" : "hx";
  RnnCellPlan p;
  p.gates = lstm ? 4 : 3;
  KILN_CHECK(state.dim() == 2, ShapeError, op, state_name, "expected ", state_name, " of 2 dims [batch, hidden], got ",
             shape_str(state.sizes()));
  p.batch = state.size(0);
  p.hidden = state.size(1);
  const DimVector gates{p.batch, p.gates * p.hidden};
  KILN_CHECK(input_gates.sizes().equals(gates.ref()), ShapeError, op, "input_gates", "expected input_gates of size ",
             shape_str(gates.ref()), " (", p.gates, " gates of the hidden size ", p.hidden, "), got ",
             shape_str(input_gates.sizes()));
  check_sizes(op, "hidden_gates", hidden_gates, gates.ref());
  const DimVector bias{p.gates * p.hidden};
  check_sizes(op, "input_bias", input_bias, bias.ref());
  check_sizes(op, "hidden_bias", hidden_bias, bias.ref());
  check_like(op, "hidden_gates", hidden_gates, input_gates);
  check_like(op, state_name, state, input_gates);
  check_like(op, "input_bias", input_bias, input_gates);
  check_like(op, "hidden_bias", hidden_bias, input_gates);
  p.has_bias = input_bias.defined() || hidden_bias.defined();
  p.dtype = input_gates.dtype();
  size_plan(p, lstm ? 4 : 5);
  p.sizes = p.hidden_sizes;
  return p;
}

RnnCellPlan rnn_cell(const char* op, const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& cx,
                     const TensorBase& cy, const TensorBase& workspace, bool has_bias) {
  RnnCellPlan p;
  KILN_CHECK(cx.dim() == 2, ShapeError, op, "cx", "expected cx of 2 dims [batch, hidden], got ", shape_str(cx.sizes()));
  p.batch = cx.size(0);
  p.hidden = cx.size(1);
  check_sizes(op, "cy", cy, cx.sizes());
  check_sizes(op, "grad_hy", grad_hy, cx.sizes());
  check_sizes(op, "grad_cy", grad_cy, cx.sizes());
  const DimVector ws{p.batch, 4 * p.hidden};
  check_sizes(op, "workspace", workspace, ws.ref());
  check_like(op, "cy", cy, cx);
  check_like(op, "workspace", workspace, cx);
  check_like(op, "grad_hy", grad_hy, cx);
  check_like(op, "grad_cy", grad_cy, cx);
  p.has_bias = has_bias;
  p.dtype = cx.dtype();
  size_plan(p, 4);
  p.sizes = p.gates_sizes;
  return p;
}

RnnCellPlan rnn_cell(const char* op, const TensorBase& grad_hy, const TensorBase& workspace) {
  RnnCellPlan p;
  p.gates = 3;
  KILN_CHECK(grad_hy.dim() == 2, ShapeError, op, "grad_hy", "expected grad_hy of 2 dims [batch, hidden], got ",
             shape_str(grad_hy.sizes()));
  p.batch = grad_hy.size(0);
  p.hidden = grad_hy.size(1);
  const DimVector ws{p.batch, 5 * p.hidden};
  check_sizes(op, "workspace", workspace, ws.ref());
  check_like(op, "workspace", workspace, grad_hy);
  p.dtype = grad_hy.dtype();
  size_plan(p, 5);
  p.sizes = p.gates_sizes;
  return p;
}

}  // namespace kiln::meta
