// Gradient checkpointing (kiln/autograd/checkpoint.h), on the custom-function machinery of
// kiln/autograd/function.h: forward runs fn under no-grad and saves its inputs; backward runs
// it again with grad mode on and differentiates it.
#include "kiln/autograd/checkpoint.h"

#include <memory>
#include <optional>
#include <utility>
#include "kiln/autocast.h"
#include "kiln/autograd/function.h"
#include "kiln/core.h"

namespace kiln::autograd {

namespace {

struct CheckpointState {
  std::function<TensorList(const TensorList&)> fn;
  bool preserve_rng_state = true;
  GeneratorState rng;  // the default generator's state when forward ran fn
  // The autocast regions forward ran fn in (per device type: its dtype, or none when off), so
  // the recomputation casts as forward did, as PyTorch's checkpoint does.
  std::optional<DType> autocast_cpu, autocast_cuda;
};

std::optional<DType> autocast_region(DeviceType device) {
  if (!autocast::is_enabled(device)) return std::nullopt;
  return autocast::lower_precision_dtype(device);
}

// The recomputation's stand-in for an input that requires grad: an alias whose node passes the
// gradient it receives through. It has no edges while fn's recomputation is differentiated, so
// that pass stops there (and never runs the graph in front of the checkpoint, which the running
// backward owns); its edge to the input is added afterwards, so the gradients' own history
// (under create_graph) reaches the input.
class CheckpointInputBackward final : public Node {
 public:
  const char* name() const override { return "CheckpointInputBackward"; }
  TensorBaseList apply(TensorBaseList&& grads) override {
    TensorBaseList out(next_edges.size());
    if (!out.empty() && !grads.empty()) out[0] = std::move(grads[0]);
    return out;
  }
};

// Puts a generator state in place and, when it goes, the state it found.
class RngStateGuard {
 public:
  explicit RngStateGuard(const GeneratorState& state) : previous_(default_generator().get_state()) {
    default_generator().set_state(state);
  }
  ~RngStateGuard() { default_generator().set_state(previous_); }
  RngStateGuard(const RngStateGuard&) = delete;
  RngStateGuard& operator=(const RngStateGuard&) = delete;

 private:
  GeneratorState previous_;
};

TensorList checkpoint_backward(const CheckpointState& s, AutogradContext* ctx, TensorList grad_outputs) {
  const TensorList saved = ctx->get_saved_variables();
  TensorList inputs(saved.size());
  std::vector<Ref<CheckpointInputBackward>> stand_ins(saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    if (!saved[i].defined()) continue;
    inputs[i] = saved[i].detach();
    if (!ctx->needs_input_grad(i)) continue;
    auto node = make_ref<CheckpointInputBackward>();
    node->output_meta.push_back({DimVector(inputs[i].sizes()), inputs[i].dtype(), inputs[i].device()});
    set_history(inputs[i], node, 0);
    inputs[i].retain_grad();
    stand_ins[i] = std::move(node);
  }

  TensorList outputs;
  {
    std::optional<RngStateGuard> rng;
    if (s.preserve_rng_state) rng.emplace(s.rng);
    std::optional<AutocastGuard> cpu_region, cuda_region;  // backward runs with autocast off
    if (s.autocast_cpu) cpu_region.emplace(DeviceType::CPU, *s.autocast_cpu);
    if (s.autocast_cuda) cuda_region.emplace(DeviceType::CUDA, *s.autocast_cuda);
    EnableGradGuard grad_on(true);
    outputs = s.fn(inputs);
  }
  KILN_CHECK(outputs.size() == grad_outputs.size(), ValueError, "checkpoint", "fn", "fn returned ", outputs.size(),
             " tensors when recomputed for backward, but ", grad_outputs.size(),
             " in forward; fn must be deterministic in its structure");

  TensorList roots, seeds;
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!grad_outputs[j].defined() || !outputs[j].defined() || !outputs[j].requires_grad()) continue;
    roots.push_back(outputs[j]);
    seeds.push_back(std::move(grad_outputs[j]));
  }
  TensorList grads(saved.size());
  if (!roots.empty()) {
    // With grad mode on (the engine runs under create_graph), the gradients are recorded too.
    backward(roots, seeds, /*retain_graph=*/false, /*create_graph=*/GradMode::is_enabled());
    for (size_t i = 0; i < saved.size(); ++i)
      if (stand_ins[i]) grads[i] = inputs[i].grad();
  }
  for (size_t i = 0; i < saved.size(); ++i)
    if (stand_ins[i]) stand_ins[i]->next_edges.push_back(gradient_edge(saved[i]));
  return grads;
}

}  // namespace

TensorList checkpoint(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs,
                      bool preserve_rng_state) {
  KILN_CHECK(bool(fn), ValueError, "checkpoint", "fn", "empty function");
  auto state = std::make_shared<CheckpointState>();
  state->fn = fn;
  state->preserve_rng_state = preserve_rng_state;
  detail::CustomFunctionCall call("CheckpointFunctionBackward", [state](AutogradContext* ctx, TensorList grads) {
    return checkpoint_backward(*state, ctx, std::move(grads));
  });
  call.add_input(inputs);
  call.begin();
  AutogradContext* ctx = call.ctx();
  ctx->set_materialize_grads(false);
  if (call.recording()) ctx->save_for_backward(inputs);
  if (preserve_rng_state) state->rng = default_generator().get_state();
  state->autocast_cpu = autocast_region(DeviceType::CPU);
  state->autocast_cuda = autocast_region(DeviceType::CUDA);
  TensorList outputs;
  {
    NoGradGuard no_grad;
    outputs = state->fn(inputs);
  }
  return call.finish(std::move(outputs));
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state) {
  KILN_CHECK(bool(fn), ValueError, "checkpoint", "fn", "empty function");
  auto one = [fn](const TensorList& in) { return TensorList{fn(in[0])}; };
  return checkpoint(one, TensorList{input}, preserve_rng_state)[0];
}

}  // namespace kiln::autograd
