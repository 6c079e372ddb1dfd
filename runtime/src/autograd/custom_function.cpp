// Custom autograd functions (kiln/autograd/function.h): the node that calls a user's backward,
// and the bookkeeping around forward (PyTorch's CppNode and _wrap_outputs).
#include "kiln/autograd/function.h"

#include <cxxabi.h>
#include <cstdlib>
#include <memory>
#include "internal.h"
#include "kiln/core.h"

namespace kiln::autograd {

namespace detail {

class CustomFunctionNode final : public Node {
 public:
  CustomFunctionNode(const char* name, CustomBackward backward) : name_(name), backward_(std::move(backward)) {}
  const char* name() const override { return name_; }
  TensorBaseList apply(TensorBaseList&& grads) override;
  void release_variables() override {
    for (SavedVariable& v : ctx.saved_) v.reset();
    ctx.has_freed_buffers_ = true;
  }

  struct InputInfo {
    bool is_tensor = false;
    int edge = -1;  // index into next_edges, for tensors
    Tensor tensor;  // until finish: to find returned inputs and dirtied ones
    uint32_t version = 0;
    OutputMeta meta;  // sizes, dtype, device: to check the gradient returned for it
  };
  std::vector<InputInfo> inputs;
  std::vector<bool> output_defined;
  bool recording = false;
  AutogradContext ctx;

 private:
  Tensor check_gradient(Tensor g, size_t index, const InputInfo& in) const;
  const char* name_;
  CustomBackward backward_;
};

Tensor CustomFunctionNode::check_gradient(Tensor g, size_t index, const InputInfo& in) const {
  const OutputMeta& meta = in.meta;
  if (!g.sizes().equals(meta.sizes)) {
    KILN_CHECK(expandable_to(meta.sizes, g.sizes()), AutogradError, name_, "", "function ", name_,
               " returned an invalid gradient at index ", index, " - got ", shape_str(g.sizes()),
               " but expected shape compatible with ", shape_str(meta.sizes));
    g = sum_to(g, meta.sizes);
  }
  KILN_CHECK(g.device() == meta.device, AutogradError, name_, "", "function ", name_, " returned a gradient at index ",
             index, " on ", g.device().str(), " but expected it on ", meta.device.str());
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  return g;
}

TensorBaseList CustomFunctionNode::apply(TensorBaseList&& grads) {
  grads.resize(num_outputs);
  TensorList grad_outputs(num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) {
    if (grads[i].defined()) {
      grad_outputs[i] = Tensor(std::move(grads[i]));
    } else if (ctx.materialize_grads_ && output_defined[i]) {
      const OutputMeta& m = output_meta[i];
      grad_outputs[i] = zeros(m.sizes, TensorOptions(m.dtype, m.device));
    }
  }
  TensorList results = backward_(&ctx, std::move(grad_outputs));

  // As PyTorch: extra results are accepted only when all undefined.
  const size_t expected = inputs.size();
  if (results.size() > expected) {
    bool all_undefined = true;
    for (size_t i = expected; i < results.size(); ++i) all_undefined = all_undefined && !results[i].defined();
    if (all_undefined) results.resize(expected);
  }
  KILN_CHECK(results.size() == expected, AutogradError, name_, "", "function ", name_,
             " returned an incorrect number of gradients (expected ", expected, ", got ", results.size(),
             "): backward returns one per forward input, tensor or not");

  TensorBaseList grad_inputs(next_edges.size());
  for (size_t i = 0; i < expected; ++i) {
    const InputInfo& in = inputs[i];
    if (!in.is_tensor) {
      KILN_CHECK(!results[i].defined(), AutogradError, name_, "", "function ", name_,
                 " returned a defined gradient at index ", i, ", but the corresponding forward input is not a Tensor");
      continue;
    }
    // An input that needs no gradient ignores whatever backward computed for it.
    if (!results[i].defined() || !next_edges[size_t(in.edge)].valid()) continue;
    grad_inputs[size_t(in.edge)] = check_gradient(std::move(results[i]), i, in);
  }
  return grad_inputs;
}

}  // namespace detail

// ---- AutogradContext ----

void AutogradContext::save_for_backward(TensorList to_save) { to_save_ = std::move(to_save); }

TensorList AutogradContext::get_saved_variables() const {
  const char* name = node_ ? node_->name() : "CustomFunctionBackward";
  KILN_CHECK(!has_freed_buffers_, AutogradError, name, "",
             "Trying to backward through the graph a second time (or directly access saved tensors after they have "
             "already been freed). Saved intermediate values of the graph are freed when you call backward() or "
             "autograd::grad(). Specify retain_graph=true if you need to backward through the graph a second time "
             "or if you need to access saved tensors after calling backward.");
  if (!node_ || !to_save_.empty()) return to_save_;  // forward, or a call that records nothing
  TensorList out;
  out.reserve(saved_.size());
  const NodeRef owner(const_cast<Node*>(node_));
  for (const SavedVariable& v : saved_) out.push_back(v.unpack(owner, name));
  return out;
}

void AutogradContext::mark_dirty(const TensorList& inputs) {
  dirty_.clear();
  for (const Tensor& t : inputs)
    if (t.defined()) dirty_.insert(t.impl());
}

void AutogradContext::mark_non_differentiable(const TensorList& outputs) {
  non_differentiable_.clear();
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.impl());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  KILN_CHECK(index < needs_input_grad_.size(), IndexError, "needs_input_grad", "index", "index ", index,
             " is out of range for a function of ", needs_input_grad_.size(), " inputs");
  return needs_input_grad_[index];
}

// ---- CustomFunctionCall ----
namespace detail {

CustomFunctionCall::CustomFunctionCall(const char* name, CustomBackward backward)
    : node_(make_ref<CustomFunctionNode>(name, std::move(backward))) {}

CustomFunctionCall::~CustomFunctionCall() = default;

void CustomFunctionCall::add_input(const Tensor& t) {
  CustomFunctionNode::InputInfo in;
  in.is_tensor = true;
  in.edge = int(node_->next_edges.size());
  in.tensor = t;
  if (t.defined()) {
    in.version = t.version();
    in.meta = {DimVector(t.sizes()), t.dtype(), t.device()};
  }
  node_->next_edges.emplace_back();  // filled by begin() when recording
  node_->inputs.push_back(std::move(in));
}

void CustomFunctionCall::add_non_tensor_input() { node_->inputs.emplace_back(); }

bool CustomFunctionCall::recording() const { return node_->recording; }

AutogradContext* CustomFunctionCall::ctx() { return &node_->ctx; }

void CustomFunctionCall::begin() {
  CustomFunctionNode& n = *node_;
  bool any = false;
  for (const auto& in : n.inputs) any = any || (in.is_tensor && requires_grad(in.tensor));
  n.recording = any && GradMode::is_enabled();
  n.ctx.needs_input_grad_.assign(n.inputs.size(), false);
  if (!n.recording) return;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const auto& in = n.inputs[i];
    if (!in.is_tensor) continue;
    Edge e = gradient_edge(in.tensor);
    n.ctx.needs_input_grad_[i] = e.valid();
    n.next_edges[size_t(in.edge)] = std::move(e);
  }
  n.ctx.node_ = &n;
}

TensorList CustomFunctionCall::finish(TensorList outputs) {
  CustomFunctionNode& n = *node_;
  AutogradContext& ctx = n.ctx;
  const char* name = n.name();
  const NodeRef node = n.recording ? NodeRef(node_) : NodeRef();

  std::unordered_map<const TensorImpl*, const CustomFunctionNode::InputInfo*> input_of;
  for (const auto& in : n.inputs)
    if (in.is_tensor && in.tensor.defined()) input_of.emplace(in.tensor.impl(), &in);
  std::unordered_set<const TensorImpl*> returned;
  for (const Tensor& t : outputs)
    if (t.defined()) returned.insert(t.impl());
  for (const TensorImpl* d : ctx.dirty_)
    KILN_CHECK(returned.count(d), AutogradError, name, "",
               "Some elements marked as dirty weren't returned as outputs: a function that modifies an input in "
               "place returns it");

  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& var = outputs[i];
    if (node) {
      n.output_defined.push_back(var.defined());
      n.output_meta.push_back(var.defined() ? Node::OutputMeta{DimVector(var.sizes()), var.dtype(), var.device()}
                                            : Node::OutputMeta{{}, kFloat32, kCPU});
    }
    if (!var.defined()) continue;
    const TensorImpl* impl = var.impl();
    auto input = input_of.find(impl);
    const bool is_input = input != input_of.end();
    const bool is_modified = ctx.dirty_.count(impl) > 0;
    const bool repeated = !seen.insert(impl).second;
    const bool differentiable = node && !ctx.non_differentiable_.count(impl) && is_inexact(var.dtype());
    // Forward wrote a dirtied input without an in-place op (through its data): count the write.
    if (is_modified && is_input && var.version() == input->second->version) var.bump_version();
    if (!differentiable) {
      // No history: an input (or anything with history) comes back as an alias without it.
      if (repeated || requires_grad(var) || (is_input && !is_modified)) var = var.detach();
      continue;
    }
    if (is_modified && !repeated) {
      KILN_CHECK(!(var.is_leaf() && var.requires_grad()), AutogradError, name, "",
                 "a leaf Variable that requires grad has been used in an in-place operation.");
      KILN_CHECK(!var.impl()->is_view, NotImplementedError, name, "",
                 "a view marked dirty by a custom function while autograd records is not supported yet (kiln's own "
                 "in-place ops on views are): mark the base dirty instead, or run under NoGradGuard");
      set_history(var, node, uint32_t(i));  // the caller's handle now carries this node
      continue;
    }
    // A returned input (or an output seen before, or a tensor fn closed over) keeps its own
    // history; the caller gets an alias that carries this node's.
    if (is_input || repeated || var.impl()->autograd()) var = var.detach();
    set_history(var, node, uint32_t(i));
  }
  if (node) n.num_outputs = uint32_t(outputs.size());

  // Saved after the outputs have their history: an output is saved as one (without its node,
  // which would then own itself) and re-attached at unpack.
  if (node) {
    ctx.saved_.reserve(ctx.to_save_.size());
    for (const Tensor& t : ctx.to_save_) ctx.saved_.emplace_back(t, t.defined() && t.grad_fn().get() == node.get());
  }
  ctx.to_save_.clear();
  for (auto& in : n.inputs) in.tensor = Tensor();  // the node keeps edges, not inputs
  if (!node) ctx.node_ = nullptr;
  return outputs;
}

std::string demangled_name(const std::type_info& type) {
  int status = 0;
  char* raw = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  if (status != 0 || !raw) return "CustomFunctionBackward";
  std::string name(raw);
  std::free(raw);
  const std::string anonymous = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anonymous)) != std::string::npos;) name.erase(at, anonymous.size());
  return name;
}

}  // namespace detail
}  // namespace kiln::autograd
