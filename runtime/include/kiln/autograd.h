#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
// Reverse-mode autograd: graph nodes, saved tensors with version checks, and the engine.
#include <cstdint>
#include <string>
#include <vector>
#include "kiln/tensor.h"

namespace kiln {

// ---- Grad mode (thread-local) ----
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
 private:
  bool prev_;
};
class EnableGradGuard {
 public:
  explicit EnableGradGuard(bool enabled = true) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
 private:
  bool prev_;
};

// ---- Graph ----
struct Edge {
  NodeRef fn;              // null: that input does not need a gradient
  uint32_t input_nr = 0;   // which input slot of fn receives the gradient
  bool valid() const { return bool(fn); }
};

// One backward function. Generated nodes derive from it; `apply` gets one gradient per
// forward output (undefined when that output got none) and returns one per next edge.
class Node : public RefCounted {
 public:
  Node();
  ~Node() override;
  virtual const char* name() const = 0;
  virtual TensorList apply(TensorList&& grads) = 0;
  // Drop saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  std::vector<Edge> next_edges;
  uint64_t sequence_nr;     // creation order; later nodes run first
  uint32_t num_outputs = 1; // forward outputs (= gradients apply receives)
  // Metadata of each forward output, to make zero gradients and check shapes.
  struct OutputMeta { DimVector sizes; DType dtype; Device device; };
  std::vector<OutputMeta> output_meta;
  bool released = false;    // variables already released: a second backward is an error
};

// Accumulates into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  ~AccumulateGrad() override;
  const char* name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  Tensor variable;
};

struct AutogradMeta {
  AutogradMeta() = default;
  AutogradMeta(const AutogradMeta&) = delete;
  AutogradMeta& operator=(const AutogradMeta&) = delete;
  ~AutogradMeta();  // a retaining non-leaf drops the gradient parked for it
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  NodeRef grad_fn;        // null for leaves
  uint32_t output_nr = 0;
  // A leaf's live accumulator, not owned (it owns the leaf); ~AccumulateGrad clears it.
  AccumulateGrad* accumulator = nullptr;
};

// A tensor kept for backward. Remembers the version at save time and refuses to unpack
// after an in-place change. Saving a node's own output stores it without history
// (no reference cycle) and re-attaches the node when unpacked.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  Tensor unpack(const NodeRef& owner, const char* node_name) const;
  void reset() { data_ = Tensor(); was_defined_ = false; released_ = true; }
  bool defined() const { return was_defined_; }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false, requires_grad_ = false, was_defined_ = false, released_ = false;
  bool is_leaf_ = false;
  NodeRef grad_fn_;  // for saved inputs that are non-leaves
};

namespace autograd {

// True when recording is on and any tensor requires grad.
bool any_requires_grad(std::initializer_list<const Tensor*> tensors);
bool any_requires_grad(const TensorList& tensors);
// The edge a gradient for `t` flows along (its grad_fn, or its leaf accumulator).
Edge gradient_edge(const Tensor& t);
// Attach `node` as the grad_fn of `outputs` (outputs that are inexact dtypes only).
void set_history(const TensorList& outputs, const NodeRef& node);
void set_history(const Tensor& output, const NodeRef& node, uint32_t output_nr = 0);
// Checks before an in-place op on `self` while recording.
void check_inplace(const Tensor& self, const char* op);

// Runs backward from `outputs` seeded with `grad_outputs` (ones for scalars when undefined).
void backward(const TensorList& outputs, const TensorList& grad_outputs = {}, bool retain_graph = false,
              bool create_graph = false);
// Gradients of outputs w.r.t. inputs, without touching .grad. allow_unused=false raises for
// an input that the outputs do not depend on.
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                bool allow_unused = false);

// Sum `grad` down to `sizes` (undoes broadcasting) — used by every generated backward.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

}  // namespace autograd
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
