// AccumulateGrad: the sink of a leaf's gradient, and the per-leaf cache of that node.
#include <mutex>
#include <unordered_map>
#include "internal.h"

namespace kiln {

namespace {
// Leaf impl -> its live accumulator, and back. Non-owning: ~Node erases a dying
// accumulator; it holds the leaf, so the key cannot be reused while the entry exists.
std::mutex accumulators_mutex;
std::unordered_map<const TensorImpl*, AccumulateGrad*> accumulators;
std::unordered_map<const Node*, const TensorImpl*> accumulator_leaves;
}  // namespace

AccumulateGrad::AccumulateGrad(Tensor var) : variable(std::move(var)) {
  // As PyTorch: run as soon as ready, freeing the buffer early. ~Node also reads this
  // mark to find accumulators (AccumulateGrad declares no destructor of its own).
  sequence_nr = autograd::detail::kAccumulatorSequenceNr;
  num_outputs = 1;
  output_meta.push_back({DimVector(variable.sizes()), variable.dtype(), variable.device()});
}


TensorList AccumulateGrad::apply(TensorList&& grads) {
  if (grads.empty() || !grads[0].defined()) return {};
  Tensor g = std::move(grads[0]);
  KILN_CHECK(g.sizes().equals(variable.sizes()), AutogradError, "AccumulateGrad", "grad", "gradient of shape ",
             shape_str(g.sizes()), " does not match the leaf's shape ", shape_str(variable.sizes()));
  AutogradMeta& meta = variable.impl()->autograd_or_create();
  Tensor& slot = meta.grad;
  if (!slot.defined()) {
    if (GradMode::is_enabled()) {
      slot = clone(g);  // create_graph: keep the graph so .grad can be differentiated
    } else if (g.impl()->use_count() == 1 && g.storage()->use_count() == 1 && g.is_contiguous()) {
      // Nobody else can see this buffer: store it without copying.
      slot = g.impl()->autograd() ? autograd::detail::alias(g) : std::move(g);
    } else {
      slot = clone(g.impl()->autograd() ? autograd::detail::alias(g) : g);
    }
  } else if (!GradMode::is_enabled() && slot.is_contiguous() && slot.dtype() == g.dtype() && !slot.requires_grad()) {
    slot.add_(g);  // the common case of a second backward: no new allocation
  } else {
    slot = slot + g;
  }
  return {};
}

namespace autograd::detail {

NodeRef grad_accumulator(const Tensor& leaf) {
  std::lock_guard<std::mutex> lock(accumulators_mutex);
  auto it = accumulators.find(leaf.impl());
  // use_count 0: the node is being destroyed right now and will erase itself.
  if (it != accumulators.end() && it->second->use_count() > 0) return NodeRef(it->second);
  auto node = make_ref<AccumulateGrad>(leaf);
  accumulators[leaf.impl()] = node.get();
  accumulator_leaves[node.get()] = leaf.impl();
  return node;
}

void forget_accumulator(const Node* node) {
  std::lock_guard<std::mutex> lock(accumulators_mutex);
  auto back = accumulator_leaves.find(node);
  if (back == accumulator_leaves.end()) return;
  auto it = accumulators.find(back->second);
  if (it != accumulators.end() && it->second == node) accumulators.erase(it);
  accumulator_leaves.erase(back);
}

}  // namespace autograd::detail
}  // namespace kiln
