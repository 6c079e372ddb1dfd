#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
// Reverse-mode autograd over Tensor: the engine's entry points (backward, grad) and a leaf's
// gradient accumulator. The graph itself (nodes, edges, saved tensors) is kiln/autograd/graph.h;
// custom functions (Function<T>) kiln/autograd/function.h, checkpointing kiln/autograd/checkpoint.h.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "kiln/autograd/checkpoint.h"
#include "kiln/autograd/forward_ad.h"
#include "kiln/autograd/function.h"
#include "kiln/autograd/graph.h"
#include "kiln/tensor.h"

namespace kiln {

// Accumulates into a leaf's .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  ~AccumulateGrad() override;
  const char* name() const override { return "AccumulateGrad"; }
  TensorBaseList apply(TensorBaseList&& grads) override;
  Tensor variable;

 private:
  void accumulate(Tensor g);  // into variable's .grad, under the leaf's lock
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
  // A leaf's gradient and post-accumulate hooks (null until one is registered). They outlive
  // its accumulator, which the engine reads them through; a non-leaf's hooks live on its grad_fn.
  std::shared_ptr<autograd::Hooks> hooks;
  // Forward-mode AD (kiln/autograd/forward_grad.h): the tangent and the dual level it belongs to
  // (a tangent of a level that has ended is dropped when next read).
  TensorBase fw_grad;
  uint64_t fw_level = 0;
};

namespace autograd {

// The list forms of kiln/autograd/graph.h's helpers, for public Tensor lists.
bool any_requires_grad(const TensorList& tensors);
void set_history(const TensorList& outputs, const NodeRef& node);

// Runs backward from `outputs` seeded with `grad_outputs` (ones for scalars when undefined).
// With `inputs`, gradients accumulate only into those tensors' .grad (a non-leaf among them
// starts retaining its gradient, as PyTorch); the rest of the graph's leaves are left alone.
void backward(const TensorList& outputs, const TensorList& grad_outputs = {}, bool retain_graph = false,
              bool create_graph = false, const TensorList& inputs = {});
// Gradients of outputs w.r.t. inputs, without touching .grad. allow_unused=false raises for
// an input that the outputs do not depend on.
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                bool allow_unused = false);

// Anomaly detection (PyTorch's torch.autograd.detect_anomaly, process-wide as there): while on,
// the engine checks every gradient a node returns and raises an AutogradError naming the node
// (its name is the forward op's: "SqrtBackward") when one holds a NaN or an infinity. Off by
// default; when off the engine pays one relaxed load per node.
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace autograd
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_H_
