// The backward engine: one call, one thread. Counts how many gradients each node of the
// graph reachable from the roots will receive, runs nodes whose inputs are complete in
// decreasing creation order, and sums gradients that arrive at the same node input. Runs the
// hooks of nodes that have them and, in anomaly mode, checks what every node returns.
#include <atomic>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>
#include "hooks.h"
#include "kiln/autocast.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/isfinite.h"
#include "kiln/gen/api/isnan.h"

namespace kiln::autograd {

namespace {

std::atomic<bool> anomaly_enabled{false};

// Anomaly mode: a gradient with a NaN or an infinity names the node that returned it (PyTorch
// checks NaN alone, with this message).
void check_anomaly(const Node& node, const TensorBaseList& outputs) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorBase& g = outputs[i];
    if (!g.defined() || !is_inexact(g.dtype()) || all(isfinite(g)).item<bool>()) continue;
    const char* what = any(isnan(g)).item<bool>() ? "nan" : "inf";
    KILN_FAIL(AutogradError, node.name(), "", "Function '", node.name(), "' returned ", what, " values in its ", i,
              "th output.");
  }
}

// The tensor hooks that apply to the gradients `node` receives: those of its non-leaf outputs,
// or, for a leaf's accumulator, the leaf's (they live with the leaf, not the node).
Hooks* tensor_hooks(Node& node) {
  if (node.sequence_nr != detail::kAccumulatorSequenceNr) {
    Hooks* h = node.hooks();
    return h && !h->tensor.empty() ? h : nullptr;
  }
  const AutogradMeta* meta = static_cast<AccumulateGrad&>(node).variable.impl()->autograd();
  return meta && meta->hooks && !meta->hooks->tensor.empty() ? meta->hooks.get() : nullptr;
}

struct NodeTask {
  NodeRef node;
  int dependencies = 0;
  bool needed = true;    // receives a gradient somebody uses
  bool execute = true;   // its apply() must run (false: only captured, as grad()'s inputs)
  TensorBaseList buffer;                              // one slot per forward output of the node
  std::vector<std::pair<uint32_t, size_t>> captures;  // (input slot, index into grad()'s result)
};

struct ByCreationOrder {
  bool operator()(const NodeTask* a, const NodeTask* b) const { return a->node->sequence_nr < b->node->sequence_nr; }
};

// Adds `g` into input slot `nr` of a node (PyTorch's InputBuffer).
void accumulate(NodeTask& task, uint32_t nr, Tensor g) {
  if (!g.defined()) return;
  if (task.buffer.size() <= nr) task.buffer.resize(std::max<size_t>(nr + 1, task.node->num_outputs));
  TensorBase& slot = task.buffer[nr];
  if (slot.defined()) slot = Tensor(slot) + g;
  else slot = std::move(g);
}

// Makes a gradient fit the forward output it belongs to, as PyTorch's validate_outputs:
// broadcast gradients are summed down, dtypes converted; anything else is a bug in `fn`.
Tensor fit_gradient(Tensor g, const Edge& edge, const Node& producer, size_t index) {
  const auto& metas = edge.fn->output_meta;
  if (edge.input_nr >= metas.size()) return g;
  const Node::OutputMeta& meta = metas[edge.input_nr];
  if (!g.sizes().equals(meta.sizes)) {
    KILN_CHECK(detail::expandable_to(meta.sizes, g.sizes()), AutogradError, producer.name(), "",
               "returned an invalid gradient at index ", index, " - got ", shape_str(g.sizes()),
               " but expected shape compatible with ", shape_str(meta.sizes));
    g = sum_to(g, meta.sizes);
  }
  KILN_CHECK(g.device() == meta.device, AutogradError, producer.name(), "", "returned a gradient at index ", index,
             " on ", g.device().str(), " but expected it on ", meta.device.str());
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  return g;
}

class GraphTask {
 public:
  explicit GraphTask(bool retain_graph) : retain_graph_(retain_graph) {}

  // Discovers every node reachable from the roots, each once.
  void build(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    for (const Edge& e : roots) {
      if (!e.valid()) continue;
      if (task_of(e.fn).second) stack.push_back(e.fn.get());
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order_.push_back(n);
      for (const Edge& e : n->next_edges) {
        if (!e.valid()) continue;
        if (task_of(e.fn).second) stack.push_back(e.fn.get());
      }
    }
  }

  // grad() and backward(inputs=): mark capture points and keep only the part of the graph
  // that leads to them.
  void add_capture(const Edge& edge, size_t index) {
    auto it = tasks_.find(edge.fn.get());
    if (it == tasks_.end()) return;  // not reachable from the outputs: unused
    it->second.captures.emplace_back(edge.input_nr, index);
  }

  void prune_to_captures() {
    // A node is needed when a capture point is reachable from it; it executes when one of
    // its children is needed. Parents of a needed node are needed: walk parent links.
    std::unordered_map<Node*, std::vector<Node*>> parents;
    for (Node* n : order_)
      for (const Edge& e : n->next_edges)
        if (e.valid()) parents[e.fn.get()].push_back(n);
    for (auto& [n, t] : tasks_) t.needed = t.execute = false;
    std::vector<Node*> stack;
    for (auto& [n, t] : tasks_)
      if (!t.captures.empty()) {
        t.needed = true;
        stack.push_back(n);
      }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (Node* p : parents[n]) {
        NodeTask& pt = tasks_[p];
        pt.execute = true;
        if (!pt.needed) {
          pt.needed = true;
          stack.push_back(p);
        }
      }
    }
  }

  // backward(inputs=): a captured leaf's accumulator runs (into .grad). A captured non-leaf's
  // grad_fn needs not: its gradient reaches .grad through retain_grad as it arrives.
  void run_captured_accumulators() {
    for (auto& [n, t] : tasks_)
      if (!t.captures.empty() && n->sequence_nr == detail::kAccumulatorSequenceNr) t.execute = true;
  }

  void count_dependencies() {
    for (Node* n : order_) {
      if (!tasks_[n].execute) continue;
      for (const Edge& e : n->next_edges)
        if (e.valid()) {
          NodeTask& child = tasks_[e.fn.get()];
          if (child.needed) ++child.dependencies;
        }
    }
  }

  void seed(const Edge& root, Tensor grad) {
    NodeTask& t = tasks_[root.fn.get()];
    if (t.needed) accumulate(t, root.input_nr, std::move(grad));
  }

  // Runs the graph; captured gradients land in `captured`.
  void run(TensorList& captured) {
    std::priority_queue<NodeTask*, std::vector<NodeTask*>, ByCreationOrder> ready;
    for (auto& [n, t] : tasks_)
      if (t.needed && t.dependencies == 0) ready.push(&t);
    while (!ready.empty()) {
      NodeTask& task = *ready.top();
      ready.pop();
      Node& node = *task.node;
      // What this node receives is complete: the tensor hooks of its outputs, then retain_grad
      // (which sees the hooked gradient, as PyTorch), then grad()'s captures.
      if (Hooks* hooks = tensor_hooks(node)) run_tensor_hooks(*hooks, task.buffer);
      if (detail::has_retained(&node)) detail::stash_retained(&node, task.buffer);
      for (auto [slot, index] : task.captures)
        if (slot < task.buffer.size()) captured[index] = task.buffer[slot];
      if (!task.execute) {
        task.buffer.clear();
        continue;
      }
      TensorBaseList outputs = call(node, std::move(task.buffer));
      for (size_t i = 0; i < node.next_edges.size(); ++i) {
        const Edge& e = node.next_edges[i];
        if (!e.valid()) continue;
        NodeTask& child = tasks_[e.fn.get()];
        if (!child.needed) continue;
        if (i < outputs.size() && outputs[i].defined())
          accumulate(child, e.input_nr, fit_gradient(Tensor(std::move(outputs[i])), e, node, i));
        if (--child.dependencies == 0) ready.push(&child);
      }
    }
  }

 private:
  // (task, newly created)
  std::pair<NodeTask*, bool> task_of(const NodeRef& fn) {
    auto [it, inserted] = tasks_.try_emplace(fn.get());
    if (inserted) it->second.node = fn;
    return {&it->second, inserted};
  }

  TensorBaseList call(Node& node, TensorBaseList&& grads) {
    Hooks* hooks = node.hooks();
    if (hooks && !hooks->pre.empty()) {
      grads.resize(std::max<size_t>(grads.size(), node.num_outputs));
      run_pre_hooks(*hooks, grads, node);
    }
    bool any = false;
    for (const TensorBase& g : grads) any = any || g.defined();
    TensorBaseList outputs;
    const bool post_hooks = hooks && !hooks->post.empty();
    TensorBaseList received;  // for post-hooks only
    if (any) {  // a node that got no gradient contributes none (every backward is linear in grad)
      grads.resize(std::max<size_t>(grads.size(), node.num_outputs));
      if (post_hooks) received = grads;
      outputs = node.apply(std::move(grads));
      KILN_CHECK(outputs.size() == node.next_edges.size(), AutogradError, node.name(), "",
                 "returned an incorrect number of gradients (expected ", node.next_edges.size(), ", got ",
                 outputs.size(), ")");
    }
    if (post_hooks) {
      if (!any) {
        received = std::move(grads);
        received.resize(std::max<size_t>(received.size(), node.num_outputs));
        outputs.resize(node.next_edges.size());
      }
      run_post_hooks(*hooks, outputs, received, node);
    }
    if (anomaly_enabled.load(std::memory_order_relaxed)) check_anomaly(node, outputs);
    // A leaf's AccumulateGrad saves nothing and may be shared with graphs running on other
    // threads: leave it untouched (TSan found the racing write to `released`).
    if (!retain_graph_ && node.sequence_nr != detail::kAccumulatorSequenceNr) {
      node.release_variables();
      node.released = true;
    }
    return outputs;
  }

  bool retain_graph_;
  std::unordered_map<Node*, NodeTask> tasks_;
  std::vector<Node*> order_;  // discovery order, each node once
};

// The edges gradients start from, and their seed gradients.
void make_roots(const TensorList& outputs, const TensorList& grad_outputs, const char* op, std::vector<Edge>& roots,
                TensorList& seeds) {
  KILN_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), ValueError, op, "grad_outputs",
             "got ", grad_outputs.size(), " gradients for ", outputs.size(), " outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    KILN_CHECK(out.defined(), ValueError, op, "outputs", "element ", i, " of tensors is undefined");
    Edge edge = gradient_edge(out);
    KILN_CHECK(edge.valid(), AutogradError, op, "outputs", "element ", i,
               " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      KILN_CHECK(out.numel() == 1, AutogradError, op, "grad_outputs",
                 "grad can be implicitly created only for scalar outputs (output ", i, " has shape ",
                 shape_str(out.sizes()), ")");
      g = ones_like(out);
    } else {
      KILN_CHECK(g.sizes().equals(out.sizes()), ShapeError, op, "grad_outputs", "Mismatch in shape: grad_output[",
                 i, "] has a shape of ", shape_str(g.sizes()), " and output[", i, "] has a shape of ",
                 shape_str(out.sizes()));
    }
    roots.push_back(std::move(edge));
    seeds.push_back(std::move(g));
  }
}

}  // namespace

bool AnomalyMode::is_enabled() { return anomaly_enabled.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { anomaly_enabled.store(enabled, std::memory_order_relaxed); }

void backward(const TensorList& outputs, const TensorList& grad_outputs, bool retain_graph, bool create_graph,
              const TensorList& inputs) {
  std::vector<Edge> roots;
  TensorList seeds;
  make_roots(outputs, grad_outputs, "backward", roots, seeds);
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    KILN_CHECK(in.defined(), ValueError, "backward", "inputs", "element ", i, " of inputs is undefined");
    KILN_CHECK(in.requires_grad(), AutogradError, "backward", "inputs", "One of the differentiated Tensors (element ",
               i, " of inputs) does not require grad");
    // As PyTorch: a non-leaf's .grad is filled by retain_grad, which it keeps afterwards.
    if (!in.is_leaf()) in.retain_grad();
    input_edges.push_back(gradient_edge(in));
  }
  // Formulas run recorded only for create_graph; that also keeps .grad's history.
  EnableGradGuard mode(create_graph);
  AutocastOffGuard no_autocast;  // gradients in the dtypes forward chose
  // A graph built by create_graph reaches back into this one (saved outputs re-attach
  // their node), so it must stay usable: PyTorch's retain_graph=None default.
  GraphTask task(retain_graph || create_graph);
  task.build(roots);
  if (!input_edges.empty()) {
    for (size_t i = 0; i < input_edges.size(); ++i) task.add_capture(input_edges[i], i);
    task.prune_to_captures();
    task.run_captured_accumulators();
  }
  task.count_dependencies();
  for (size_t i = 0; i < roots.size(); ++i) task.seed(roots[i], std::move(seeds[i]));
  TensorList captured(inputs.size());  // unused: the gradients go to .grad
  task.run(captured);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  std::vector<Edge> roots;
  TensorList seeds;
  make_roots(outputs, grad_outputs, "grad", roots, seeds);
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].defined(), ValueError, "grad", "inputs", "element ", i, " of inputs is undefined");
    Edge e = gradient_edge(inputs[i]);
    KILN_CHECK(e.valid(), AutogradError, "grad", "inputs", "One of the differentiated Tensors (element ", i,
               " of inputs) does not require grad");
    input_edges.push_back(std::move(e));
  }
  EnableGradGuard mode(create_graph);
  AutocastOffGuard no_autocast;  // gradients in the dtypes forward chose
  GraphTask task(retain_graph.value_or(create_graph));
  task.build(roots);
  for (size_t i = 0; i < input_edges.size(); ++i) task.add_capture(input_edges[i], i);
  task.prune_to_captures();
  task.count_dependencies();
  for (size_t i = 0; i < roots.size(); ++i) task.seed(roots[i], std::move(seeds[i]));
  TensorList captured(inputs.size());
  task.run(captured);
  for (size_t i = 0; i < captured.size(); ++i)
    KILN_CHECK(allow_unused || captured[i].defined(), AutogradError, "grad", "inputs", "One of the differentiated "
               "Tensors (element ", i, " of inputs) appears to not have been used in the graph. Set "
               "allow_unused=true if this is the desired behavior.");
  return captured;
}

}  // namespace kiln::autograd
