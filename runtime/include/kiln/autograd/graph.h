#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_GRAPH_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_GRAPH_H_
// Reverse-mode autograd's graph over TensorBase: grad mode, nodes and their edges, saved
// tensors, and what a generated op entry records with. It names no op, so its text never
// changes when an op is added; kiln/autograd.h adds the user-facing API over Tensor (backward,
// grad, a leaf's accumulator).
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>
#include "kiln/autograd/removable_handle.h"
#include "kiln/pooled_alloc.h"
#include "kiln/tensor_base.h"

namespace kiln {

// What a node receives (one gradient per forward output) and returns (one per next edge).
using TensorBaseList = std::vector<TensorBase>;

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

// ---- Inference mode (thread-local) ----
// As c10::InferenceMode: while a guard is alive, grad mode is off (nothing is recorded) and every
// tensor allocated is an inference tensor (Tensor::is_inference): in-place writes to it leave its
// version counter alone, and it cannot be saved for backward later. InferenceMode(false) turns it
// off (and grad mode back on) inside an enabled one. Guards nest and restore what they found.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled();

 private:
  bool prev_inference_, prev_grad_;
};

// ---- Hooks ----
namespace autograd {
struct Hooks;  // the hooks of a node or of a leaf (runtime/src/autograd/hooks.h)

}  // namespace autograd

// ---- Views ----
// Makes a view of any tensor shaped like its base: the view op replayed (narrow(b, 1, 0, 2)).
using ViewReplay = std::function<TensorBase(const TensorBase&)>;
// What a view remembers (TensorImpl::view_info): its root base (never itself a view), how to
// make it from that base, and the storage version its history was last made at. An empty
// replay marks the outputs of ops returning several views (split, chunk), which autograd does
// not let change in place, as PyTorch.
struct ViewInfo {
  TensorBase base;
  ViewReplay replay;
  uint32_t version = 0;
};

// ---- Graph ----
struct Edge {
  NodeRef fn;             // null: that input does not need a gradient
  uint32_t input_nr = 0;  // which input slot of fn receives the gradient
  bool valid() const { return bool(fn); }
};

// One backward function. Generated nodes derive from it; `apply` gets one gradient per
// forward output (undefined when that output got none) and returns one per next edge.
class Node : public RefCounted {
 public:
  static constexpr bool kRevivedByRawPointer = true;  // AccumulateGrad's lookup (try_retain)
  // Nodes and their lists come from pooled blocks (kiln/pooled_alloc.h), not malloc; the
  // virtual destructor hands operator delete the size of the node's own type.
  static void* operator new(size_t bytes) { return detail::pooled_allocate(bytes); }
  static void operator delete(void* p, size_t bytes) noexcept { detail::pooled_deallocate(p, bytes); }
  template <typename T>
  using List = std::vector<T, detail::PooledAllocator<T>>;

  Node();
  ~Node() override;
  virtual const char* name() const = 0;
  virtual TensorBaseList apply(TensorBaseList&& grads) = 0;
  // Drop saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  List<Edge> next_edges;
  uint64_t sequence_nr;      // creation order; later nodes run first
  uint32_t num_outputs = 1;  // forward outputs (= gradients apply receives)
  // Metadata of each forward output, to make zero gradients and check shapes.
  struct OutputMeta {
    DimVector sizes;
    DType dtype;
    Device device;
  };
  List<OutputMeta> output_meta;
  bool released = false;  // variables already released: a second backward is an error

  // Hooks, run by the engine in registration order (PyTorch's Node.register_prehook and
  // register_hook). A pre-hook gets the gradients the node receives (one per forward output)
  // and may return replacements; a post-hook gets what apply returned (one per next edge) and
  // what it received, and may replace the former. An empty list keeps the gradients.
  using PreHook = std::function<TensorBaseList(const TensorBaseList& grad_outputs)>;
  using PostHook = std::function<TensorBaseList(const TensorBaseList& grad_inputs, const TensorBaseList& grad_outputs)>;
  autograd::RemovableHandle register_prehook(PreHook hook);
  autograd::RemovableHandle register_hook(PostHook hook);
  // Null until a hook is registered (tensor hooks of a non-leaf output live here too): a node
  // without hooks costs the engine one null check.
  autograd::Hooks* hooks() const { return hooks_.get(); }
  const std::shared_ptr<autograd::Hooks>& hooks_or_create();

 private:
  std::shared_ptr<autograd::Hooks> hooks_;
};

// A tensor kept for backward. Remembers the version at save time and refuses to unpack
// after an in-place change. Saving a node's own output stores it without history
// (no reference cycle) and re-attaches the node when unpacked.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const TensorBase& t, bool is_output);
  TensorBase unpack(const NodeRef& owner, const char* node_name) const;
  void reset() {
    data_ = TensorBase();
    was_defined_ = false;
    released_ = true;
  }
  bool defined() const { return was_defined_; }

 private:
  TensorBase data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false, requires_grad_ = false, was_defined_ = false, released_ = false;
  bool is_leaf_ = false;
  NodeRef grad_fn_;  // for saved inputs that are non-leaves
};

namespace autograd {

// True when `t` requires grad (a leaf that asked for it, or the output of a recorded op).
bool requires_grad(const TensorBase& t);
// True when recording is on and any tensor requires grad.
bool any_requires_grad(std::initializer_list<const TensorBase*> tensors);
// The edge a gradient for `t` flows along (its grad_fn, or its leaf accumulator).
Edge gradient_edge(const TensorBase& t);
// Attach `node` as the grad_fn of `output` (inexact dtypes only).
void set_history(const TensorBase& output, const NodeRef& node, uint32_t output_nr = 0);
// Checks before an in-place op on `self` while recording.
void check_inplace(const TensorBase& self, const char* op);
// After in-place op `fn` wrote `self`: its new history. For a view, the base's history is
// rebased onto a CopySlices node and the view's is made again from the base.
void rebase_history(const TensorBase& self, const NodeRef& fn);
// A view whose storage changed since its history was made (an in-place op on its base or on
// another view of it) makes it again from its base; anything else is left alone. Called
// wherever autograd reads a tensor's history.
void refresh_view_history(const TensorBase& t);
// Sum `grad` down to `sizes` (undoes broadcasting) — used by every generated backward.
TensorBase sum_to(const TensorBase& grad, IntArrayRef sizes);

}  // namespace autograd
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_GRAPH_H_
