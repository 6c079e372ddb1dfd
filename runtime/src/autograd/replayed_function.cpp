// make_replayed_function: records fn's forward and backward once, then wires autograd around
// their replays. The backward node copies incoming gradients into the recorded gradient
// buffers, replays, and hands back the recorded input gradients.
#include "autograd/replayed_function.h"

#include <memory>
#include "kiln/autograd.h"
#include "kiln/op_support.h"

namespace kiln::autograd::detail {
namespace {

struct ReplayState {
  const char* op = "";
  TensorFunction fn;
  std::vector<Tensor> static_inputs;
  // What backward differentiates: the inputs requiring grad (their indices in input_of_slot),
  // then the parameters requiring grad.
  std::vector<Tensor> slots;
  std::vector<size_t> input_of_slot;
  std::vector<size_t> parameter_of_slot;  // for the slots after the inputs
  bool allow_unused = false;

  bool forward_recorded = false, backward_recorded = false;
  std::vector<Tensor> graph_outputs;        // fn's outputs with history, until backward consumes them
  std::vector<Tensor> static_outputs;       // the same buffers, detached
  std::vector<int> grad_index;              // per output: its place among differentiable outputs, or -1
  std::vector<Tensor> static_grad_outputs;  // per differentiable output
  std::vector<Tensor> static_grad_slots;    // per slot; undefined where fn does not use it

  std::function<void()> replay_forward, replay_backward;
  uint64_t calls = 0;        // forward replays so far; a backward belongs to one of them
  uint64_t backward_of = 0;  // the call whose backward ran last
};

void copy_into(std::vector<Tensor>& dst, const std::vector<Tensor>& src) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < dst.size(); ++i)
    if (dst[i].defined()) dst[i].copy_(src[i]);
}

std::vector<Tensor> detached(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(t.defined() ? t.detach() : Tensor());
  return out;
}

void forward_body(ReplayState& s) {
  EnableGradGuard record(!s.slots.empty());  // history only when backward will be recorded
  std::vector<Tensor> outs = s.fn(s.static_inputs);
  if (!s.forward_recorded) {
    KILN_CHECK(!outs.empty(), ValueError, s.op, "fn", "fn returned no tensors");
    for (size_t i = 0; i < outs.size(); ++i)
      KILN_CHECK(outs[i].defined(), ValueError, s.op, "fn", "fn returned an undefined tensor as output ", i);
    s.static_outputs = detached(outs);
    s.forward_recorded = true;
  } else {
    KILN_CHECK(outs.size() == s.static_outputs.size(), ValueError, s.op, "fn", "fn returned ", outs.size(),
               " tensors, but ", s.static_outputs.size(), " when recorded");
    copy_into(s.static_outputs, outs);
  }
  s.graph_outputs = std::move(outs);
}

void backward_body(ReplayState& s) {
  std::vector<Tensor> outs;
  for (size_t j = 0; j < s.graph_outputs.size(); ++j)
    if (s.grad_index[j] >= 0) outs.push_back(s.graph_outputs[j]);
  // Allocated while recording, so a graph's memory pool holds them as long as the graph lives.
  if (!s.backward_recorded)
    for (const Tensor& o : outs) s.static_grad_outputs.push_back(empty_like(o.detach()));
  TensorList grads = autograd::grad(outs, s.slots, s.static_grad_outputs, /*retain_graph=*/false,
                                    /*create_graph=*/false, /*allow_unused=*/true);
  s.graph_outputs.clear();  // the recorded history is spent
  if (!s.backward_recorded) {
    s.static_grad_slots = detached(grads);
    s.backward_recorded = true;
  } else {
    copy_into(s.static_grad_slots, grads);
  }
}

// The backward of one call: valid only while that call's buffers are the current ones.
class ReplayedBackward final : public Node {
 public:
  ReplayedBackward(std::shared_ptr<ReplayState> state, uint64_t call) : state_(std::move(state)), call_(call) {}
  const char* name() const override { return "ReplayedBackward"; }

  TensorBaseList apply(TensorBaseList&& grads) override {
    ReplayState& s = *state_;
    TensorBaseList grad_slots(next_edges.size());
    if (!support::any_defined(grads)) return grad_slots;
    KILN_CHECK(!GradMode::is_enabled(), AutogradError, s.op, "create_graph",
               "the backward of a graphed callable is a replay and cannot itself be differentiated");
    KILN_CHECK(call_ == s.calls, AutogradError, s.op, "backward", "the backward of call ", call_,
               " ran after call ", s.calls, " overwrote the recorded buffers; run each call's backward before the next call");
    KILN_CHECK(s.backward_of != call_, AutogradError, s.op, "backward", "the backward of call ", call_,
               " already ran; a recorded backward frees what it reads, so it runs once per call");
    {
      NoGradGuard no_grad;
      for (size_t j = 0; j < s.static_grad_outputs.size(); ++j) {
        Tensor dst = s.static_grad_outputs[j];
        if (j < grads.size() && grads[j].defined())
          dst.copy_(grads[j]);
        else
          dst.zero_();
      }
    }
    s.replay_backward();
    s.backward_of = call_;
    for (size_t k = 0; k < grad_slots.size(); ++k)
      if (next_edges[k].valid() && s.static_grad_slots[k].defined()) grad_slots[k] = s.static_grad_slots[k].detach();
    return grad_slots;
  }

 private:
  std::shared_ptr<ReplayState> state_;
  uint64_t call_;
};

void check_inputs(const ReplayState& s, const std::vector<Tensor>& inputs) {
  const char* op = s.op;
  KILN_CHECK(inputs.size() == s.static_inputs.size(), ValueError, op, "inputs", "expected ", s.static_inputs.size(),
             " inputs, got ", inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& st = s.static_inputs[i];
    const Tensor& in = inputs[i];
    KILN_CHECK(in.defined(), ValueError, op, "inputs", "input ", i, " is undefined");
    KILN_CHECK(in.sizes().equals(st.sizes()) && in.dtype() == st.dtype() && in.device() == st.device(), ValueError,
               op, "inputs", "input ", i, " must be ", dtype_name(st.dtype()), " ", st.shape_str(), " on ",
               st.device().str(), " as recorded, got ", dtype_name(in.dtype()), " ", in.shape_str(), " on ",
               in.device().str());
    KILN_CHECK(!(GradMode::is_enabled() && in.requires_grad() && !st.requires_grad()), ValueError, op, "inputs",
               "input ", i, " requires grad, but sample input ", i,
               " did not, so no backward was recorded for it; record with a sample that requires grad");
  }
}

std::vector<Tensor> call(const std::shared_ptr<ReplayState>& state, const std::vector<Tensor>& inputs) {
  ReplayState& s = *state;
  check_inputs(s, inputs);
  copy_into(s.static_inputs, inputs);
  s.replay_forward();
  ++s.calls;
  std::vector<Tensor> outputs = detached(s.static_outputs);
  if (!s.replay_backward || !GradMode::is_enabled()) return outputs;
  bool needs_grad = s.slots.size() > s.input_of_slot.size();  // parameters always do
  for (size_t i : s.input_of_slot) needs_grad = needs_grad || inputs[i].requires_grad();
  if (!needs_grad) return outputs;

  auto node = make_ref<ReplayedBackward>(state, s.calls);
  for (size_t k = 0; k < s.slots.size(); ++k) {
    const bool is_input = k < s.input_of_slot.size();
    const Tensor& source = is_input ? inputs[s.input_of_slot[k]] : s.slots[k];
    node->next_edges.push_back(source.requires_grad() ? autograd::gradient_edge(source) : Edge{});
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (s.grad_index[j] < 0) continue;
    support::add_output_meta(*node, outputs[j]);
    autograd::set_history(outputs[j], node, uint32_t(s.grad_index[j]));
  }
  return outputs;
}

void check_all_used(const ReplayState& s) {
  for (size_t k = 0; k < s.slots.size(); ++k) {
    const bool used = k < s.static_grad_slots.size() && s.static_grad_slots[k].defined();
    if (used || s.allow_unused) continue;
    if (k < s.input_of_slot.size())
      KILN_FAIL(ValueError, s.op, "sample_inputs", "input ", s.input_of_slot[k],
                " requires grad but no output of fn depends on it (allow_unused_input permits this)");
    KILN_FAIL(ValueError, s.op, "parameters", "parameter ", s.parameter_of_slot[k - s.input_of_slot.size()],
              " requires grad but no output of fn depends on it (allow_unused_input permits this)");
  }
}

}  // namespace

TensorFunction make_replayed_function(ReplayedFunctionSpec spec) {
  const char* op = spec.op;
  KILN_CHECK(bool(spec.fn), ValueError, op, "fn", "empty function");
  KILN_CHECK(spec.record_forward && spec.record_backward, InternalError, op, "", "a recorder is missing");
  auto state = std::make_shared<ReplayState>();
  ReplayState& s = *state;
  s.op = op;
  s.fn = std::move(spec.fn);
  s.static_inputs = std::move(spec.static_inputs);
  s.allow_unused = spec.allow_unused_input;
  for (size_t i = 0; i < s.static_inputs.size(); ++i) {
    if (!s.static_inputs[i].requires_grad()) continue;
    s.slots.push_back(s.static_inputs[i]);
    s.input_of_slot.push_back(i);
  }
  for (size_t i = 0; i < spec.parameters.size(); ++i) {
    const Tensor& p = spec.parameters[i];
    KILN_CHECK(p.defined(), ValueError, op, "parameters", "parameter ", i, " is undefined");
    if (!p.requires_grad()) continue;  // a frozen parameter gets no gradient, as in PyTorch
    s.slots.push_back(p);
    s.parameter_of_slot.push_back(i);
  }

  // The bodies see the state through a plain pointer: the state owns the replays that own them.
  ReplayState* raw = state.get();
  s.replay_forward = spec.record_forward([raw] { forward_body(*raw); });
  int differentiable = 0;
  for (const Tensor& t : s.graph_outputs) s.grad_index.push_back(t.requires_grad() ? differentiable++ : -1);
  if (differentiable > 0)
    s.replay_backward = spec.record_backward([raw] { backward_body(*raw); });
  s.graph_outputs.clear();
  check_all_used(s);
  return [state](const std::vector<Tensor>& inputs) { return call(state, inputs); };
}

}  // namespace kiln::autograd::detail
