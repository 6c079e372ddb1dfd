// Recurrent cells and layers (ops/rnn.yaml), PyTorch 1.13's lstm_cell, gru_cell, rnn_*_cell and
// lstm/gru/rnn_* over the flat weight list. A cell is two linear projections and the fused gate op
// (tanh/relu cells: their sum through the activation). A layer projects every time step's input
// with one matmul, then steps the recurrence: a hidden matmul and the fused gate op per step.
// Autograd records the parts. proj_size is not supported.
#include <string>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/autograd/forward_grad.h"
#include "kiln/autograd/function.h"
#include "kiln/gen/api/_thnn_fused_gru_cell.h"
#include "kiln/gen/api/_thnn_fused_gru_cell_backward_impl.h"
#include "kiln/gen/api/_thnn_fused_lstm_cell.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/dropout.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/relu.h"
#include "kiln/gen/api/select.h"
#include "kiln/gen/api/squeeze.h"
#include "kiln/gen/api/stack.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/tanh.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/gen/api/unbind.h"
#include "kiln/gen/api/unsqueeze.h"

namespace kiln::composite {
namespace {

enum class Cell { Lstm, Gru, Tanh, Relu };

int64_t gate_count(Cell cell) { return cell == Cell::Lstm ? 4 : cell == Cell::Gru ? 3 : 1; }

struct Weights {
  Tensor w_ih, w_hh, b_ih, b_hh;  // biases undefined when absent
};

// A cell's weights against its input [B, I] and hidden state [B, H] (PyTorch's checks); `input_arg`
// is blamed for a w_ih that does not fit the input (an inner layer's input is the layer below's
// output, so there the weights are wrong), `arg` for the rest.
void check_weights(const char* op, const char* arg, const char* input_arg, Cell cell, const Weights& w,
                   int64_t input_size, int64_t H) {
  const int64_t G = gate_count(cell);
  KILN_CHECK(w.w_ih.dim() == 2 && w.w_hh.dim() == 2, ShapeError, op, arg, "expected 2-d w_ih and w_hh, got ",
             shape_str(w.w_ih.sizes()), " and ", shape_str(w.w_hh.sizes()));
  KILN_CHECK(w.w_ih.size(1) == input_size, ShapeError, op, input_arg, "input has inconsistent input_size: got ",
             input_size, " expected ", w.w_ih.size(1));
  KILN_CHECK(w.w_hh.size(1) == H, ShapeError, op, arg, "hidden has inconsistent hidden_size: got ", H, ", expected ",
             w.w_hh.size(1));
  KILN_CHECK(w.w_ih.size(0) == G * H && w.w_hh.size(0) == G * H, ShapeError, op, arg, "expected w_ih and w_hh of ", G,
             " * hidden_size = ", G * H, " rows, got ", shape_str(w.w_ih.sizes()), " and ", shape_str(w.w_hh.sizes()));
  for (const Tensor* b : {&w.b_ih, &w.b_hh})
    KILN_CHECK(!b->defined() || (b->dim() == 1 && b->size(0) == G * H), ShapeError, op, arg,
               "expected biases of size [", G * H, "], got ", shape_str(b->sizes()));
}

// The gates in the state's dtype: a CPU autocast region runs the projections in bfloat16 while
// the state stays float32 (PyTorch's cells promote the two; the fused ops take one dtype).
Tensor as_state(const Tensor& gates, const Tensor& state) {
  return gates.dtype() == state.dtype() ? gates : gates.to(state.dtype());
}

// One step: the input's projection `x_gates` [B, G * H] (input bias included), the state h (and c).
void step(Cell cell, const Tensor& x_gates, const Weights& w, Tensor& h, Tensor& c) {
  const Tensor xg = as_state(x_gates, h);
  switch (cell) {
    case Cell::Lstm: {
      auto [hy, cy, ws] = kiln::_thnn_fused_lstm_cell(xg, as_state(kiln::linear(h, w.w_hh), h), c, Tensor(), w.b_hh);
      h = hy;
      c = cy;
      return;
    }
    case Cell::Gru:
      h = std::get<0>(kiln::_thnn_fused_gru_cell(xg, as_state(kiln::linear(h, w.w_hh), h), h, Tensor(), w.b_hh));
      return;
    case Cell::Tanh:
      h = kiln::tanh(xg + as_state(kiln::linear(h, w.w_hh, w.b_hh), h));
      return;
    case Cell::Relu:
      h = kiln::relu(xg + as_state(kiln::linear(h, w.w_hh, w.b_hh), h));
      return;
  }
}

// A cell on [B, I] or unbatched [I] input; hx holds h (and c for the LSTM) of [B, H] or [H].
TensorList run_cell(const char* op, Cell cell, const Tensor& input, TensorList hx, const Weights& w) {
  KILN_CHECK(input.dim() == 1 || input.dim() == 2, ShapeError, op, "input", "Expected input to be 1D or 2D, got ",
             input.dim(), "D input instead");
  const bool unbatched = input.dim() == 1;
  for (const Tensor& h : hx)
    KILN_CHECK(h.dim() == input.dim(), ShapeError, op, "hx", "Expected hidden to be ", input.dim(), "D for a ",
               input.dim(), "D input, got ", h.dim(), "D instead");
  const Tensor x = unbatched ? kiln::unsqueeze(input, 0) : input;
  for (Tensor& h : hx) h = unbatched ? kiln::unsqueeze(h, 0) : h;
  for (const Tensor& h : hx)
    KILN_CHECK(h.size(0) == x.size(0) && h.sizes().equals(hx[0].sizes()), ShapeError, op, "hx", "Input batch size ",
               x.size(0), " doesn't match hidden batch size ", h.size(0));
  check_weights(op, "hx", "input", cell, w, x.size(1), hx[0].size(1));
  Tensor h = hx[0], c = hx.size() > 1 ? hx[1] : Tensor();
  step(cell, kiln::linear(x, w.w_ih, w.b_ih), w, h, c);
  TensorList out{h};
  if (cell == Cell::Lstm) out.push_back(c);
  if (unbatched)
    for (Tensor& t : out) t = kiln::squeeze(t, 0);
  return out;
}

// The time steps of x [T, ...] as T tensors whose gradients go back as one stack: a select()
// per step would send back a zero-filled gradient of all of x per step (quadratic in T).
struct TimeSteps : autograd::Function<TimeSteps> {
  static TensorList forward(autograd::AutogradContext*, Tensor x) {
    TensorList steps;
    for (int64_t t = 0; t < x.size(0); ++t) steps.push_back(x.select(0, t).clone());
    return steps;
  }
  static TensorList backward(autograd::AutogradContext*, TensorList grads) { return {kiln::stack(grads, 0)}; }
};

TensorList time_steps(const Tensor& x) {
  // custom functions carry no forward-mode tangents: under a dual level the selects are recorded
  if (!x.requires_grad() || autograd::forward_ad::any_dual({&x})) return kiln::unbind(x, 0);
  return TimeSteps::apply(x);
}

// One direction of one layer over x [T, B, I] from state h (and c): outputs [T, B, H]; h and c
// end as the final state.
Tensor run_direction(Cell cell, const Tensor& x, const Weights& w, bool reverse, Tensor& h, Tensor& c) {
  const int64_t T = x.size(0);
  // every step's input projection: one matmul
  const TensorList projected = time_steps(kiln::linear(x, w.w_ih, w.b_ih));
  std::vector<Tensor> outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    step(cell, projected[size_t(t)], w, h, c);
    outs[size_t(t)] = h;
  }
  return kiln::stack(outs, 0);
}

struct SequenceResult {
  Tensor output, h, c;
};

// The layers' forward as PyTorch's _rnn_impl: h0 (and c0) of [layers * directions, B, H].
SequenceResult run_sequence(const char* op, Cell cell, const Tensor& input, Tensor h0, Tensor c0,
                            const TensorList& params, bool has_biases, int64_t num_layers, double dropout, bool train,
                            bool bidirectional, bool batch_first) {
  const int64_t D = bidirectional ? 2 : 1, per = has_biases ? 4 : 2;
  KILN_CHECK(num_layers >= 1, ValueError, op, "num_layers", "num_layers must be at least 1, got ", num_layers);
  KILN_CHECK(dropout >= 0 && dropout <= 1, ValueError, op, "dropout",
             "dropout should be a number in range [0, 1] representing the probability of an element being zeroed, "
             "got ",
             dropout);
  KILN_CHECK(int64_t(params.size()) == num_layers * D * per, ValueError, op, "params", "expected ",
             num_layers * D * per, " parameter tensors (num_layers * directions * ", per, "), got ", params.size());
  KILN_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError, op, "input",
             "expected input of 3 dims (or 2, unbatched), got ", shape_str(input.sizes()));
  const bool unbatched = input.dim() == 2;
  const int64_t batch_dim = batch_first ? 0 : 1;
  for (const Tensor* s : {&h0, &c0})
    KILN_CHECK(!s->defined() || s->dim() == input.dim(), ShapeError, op, "hx", "For ",
               unbatched ? "unbatched" : "batched", " ", input.dim(), "-D input, hx should also be ", input.dim(),
               "-D but got ", s->dim(), "-D tensor");
  Tensor x = unbatched ? kiln::unsqueeze(input, batch_dim) : input;
  if (unbatched) {
    h0 = kiln::unsqueeze(h0, 1);
    if (c0.defined()) c0 = kiln::unsqueeze(c0, 1);
  }
  if (batch_first) x = kiln::transpose(x, 0, 1);  // [T, B, I]
  KILN_CHECK(x.size(0) > 0, ValueError, op, "input", "expected a sequence of at least one step, got input of size ",
             shape_str(input.sizes()));
  KILN_CHECK(params[1].dim() == 2, ShapeError, op, "params", "expected a 2-d w_hh, got ", shape_str(params[1].sizes()));
  const int64_t H = params[1].size(1);
  const DimVector state{num_layers * D, x.size(1), H};
  for (const Tensor* s : {&h0, &c0})
    KILN_CHECK(!s->defined() || s->sizes().equals(state.ref()), ShapeError, op, "hx", "Expected hidden size ",
               shape_str(state.ref()), ", got ", shape_str(s->sizes()));
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t idx = layer * D + d;
      const size_t at = size_t(idx * per);
      const Weights w{params[at], params[at + 1], has_biases ? params[at + 2] : Tensor(),
                      has_biases ? params[at + 3] : Tensor()};
      check_weights(op, "params", layer == 0 ? "input" : "params", cell, w, x.size(2), H);
      Tensor h = kiln::select(h0, 0, idx), c = c0.defined() ? kiln::select(c0, 0, idx) : Tensor();
      outs.push_back(run_direction(cell, x, w, d == 1, h, c));
      hs.push_back(h);
      cs.push_back(c);
    }
    x = D == 1 ? outs[0] : kiln::cat(outs, 2);
    if (train && dropout > 0 && layer + 1 < num_layers) x = kiln::dropout(x, dropout, train);
  }
  SequenceResult r{batch_first ? kiln::transpose(x, 0, 1) : x, kiln::stack(hs, 0),
                   c0.defined() ? kiln::stack(cs, 0) : Tensor()};
  if (unbatched) {
    r.output = kiln::squeeze(r.output, batch_dim);
    r.h = kiln::squeeze(r.h, 1);
    if (r.c.defined()) r.c = kiln::squeeze(r.c, 1);
  }
  return r;
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const TensorList& hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const Tensor& b_ih, const Tensor& b_hh) {
  KILN_CHECK(hx.size() == 2, ValueError, "lstm_cell", "hx", "lstm_cell expects two hidden states (h, c), got ",
             hx.size());
  const TensorList out = run_cell("lstm_cell", Cell::Lstm, input, hx, {w_ih, w_hh, b_ih, b_hh});
  return {out[0], out[1]};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return run_cell("gru_cell", Cell::Gru, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell("rnn_tanh_cell", Cell::Tanh, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell("rnn_relu_cell", Cell::Relu, input, {hx}, {w_ih, w_hh, b_ih, b_hh})[0];
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const TensorList& hx, const TensorList& params,
                                        bool has_biases, int64_t num_layers, double dropout, bool train,
                                        bool bidirectional, bool batch_first) {
  KILN_CHECK(hx.size() == 2, ValueError, "lstm", "hx", "lstm expects two hidden states (h_0, c_0), got ", hx.size());
  const SequenceResult r = run_sequence("lstm", Cell::Lstm, input, hx[0], hx[1], params, has_biases, num_layers,
                                        dropout, train, bidirectional, batch_first);
  return {r.output, r.h, r.c};
}

std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, const TensorList& params, bool has_biases,
                               int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const SequenceResult r = run_sequence("gru", Cell::Gru, input, hx, Tensor(), params, has_biases, num_layers, dropout,
                                        train, bidirectional, batch_first);
  return {r.output, r.h};
}

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, const TensorList& params, bool has_biases,
                                    int64_t num_layers, double dropout, bool train, bool bidirectional,
                                    bool batch_first) {
  const SequenceResult r = run_sequence("rnn_tanh", Cell::Tanh, input, hx, Tensor(), params, has_biases, num_layers,
                                        dropout, train, bidirectional, batch_first);
  return {r.output, r.h};
}

std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, const TensorList& params, bool has_biases,
                                    int64_t num_layers, double dropout, bool train, bool bidirectional,
                                    bool batch_first) {
  const SequenceResult r = run_sequence("rnn_relu", Cell::Relu, input, hx, Tensor(), params, has_biases, num_layers,
                                        dropout, train, bidirectional, batch_first);
  return {r.output, r.h};
}

// ATen's five results from kiln's three-result kernel: the biases' gradients are the gates'
// column sums (undefined without biases, as PyTorch's None).
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> fused_gru_cell_backward(const Tensor& grad_hy,
                                                                           const Tensor& workspace, bool has_bias) {
  const char* op = "_thnn_fused_gru_cell_backward";
  KILN_CHECK(grad_hy.dim() == 2, ShapeError, op, "grad_hy", "expected grad_hy of 2 dims [batch, hidden], got ",
             shape_str(grad_hy.sizes()));
  KILN_CHECK(workspace.dim() == 2 && workspace.size(0) == grad_hy.size(0) && workspace.size(1) == 5 * grad_hy.size(1),
             ShapeError, op, "workspace", "expected workspace of size [", grad_hy.size(0), ", ", 5 * grad_hy.size(1),
             "], got ", shape_str(workspace.sizes()));
  auto [grad_in, grad_hidden, grad_hx] = kiln::_thnn_fused_gru_cell_backward_impl(grad_hy, workspace);
  if (!has_bias) {  // empty bias gradients where PyTorch returns None, as _thnn_fused_lstm_cell_backward_impl
    const TensorOptions options(grad_in.dtype(), grad_in.device());
    return {grad_in, grad_hidden, grad_hx, kiln::empty({0}, options), kiln::empty({0}, options)};
  }
  return {grad_in, grad_hidden, grad_hx, kiln::sum(grad_in, IntArrayRef{0}), kiln::sum(grad_hidden, IntArrayRef{0})};
}

}  // namespace kiln::composite
