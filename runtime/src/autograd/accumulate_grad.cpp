// AccumulateGrad: the sink of a leaf's gradient, and the per-leaf cache of that node.
#include <mutex>
#include <unordered_map>
#include "internal.h"

namespace kiln {

namespace {
// Leaf impl -> its live accumulator, and back. Non-owning: ~Node erases a dying
// accumulator; it holds the leaf, so the key cannot be reused while the entry exists.
// Never destroyed, so graphs freed during static destruction still find it.
struct Accumulators {
  std::mutex mutex;
  std::unordered_map<const TensorImpl*, AccumulateGrad*> by_leaf;
  std::unordered_map<const Node*, const TensorImpl*> leaf_of;
};
Accumulators& accumulators() {
  static auto* table = new Accumulators();
  return *table;
}
}  // namespace

AccumulateGrad::AccumulateGrad(Tensor var) : variable(std::move(var)) {
  // As PyTorch: run as soon as ready, freeing the buffer early. ~Node also reads this
  // mark to find accumulators (AccumulateGrad declares no destructor of its own).
  sequence_nr = autograd::detail::kAccumulatorSequenceNr;
  num_outputs = 1;
  output_meta.push_back({DimVector(variable.sizes()), variable.dtype(), variable.device()});
}


namespace {
// Graphs on several threads may share a leaf: its .grad is updated under a lock. Striped by
// leaf so unrelated leaves do not contend.
std::mutex& leaf_lock(const TensorImpl* leaf) {
  static std::mutex stripes[64];
  return stripes[(reinterpret_cast<uintptr_t>(leaf) >> 6) % 64];
}
}  // namespace

TensorList AccumulateGrad::apply(TensorList&& grads) {
  if (grads.empty() || !grads[0].defined()) return {};
  Tensor g = std::move(grads[0]);
  std::lock_guard<std::mutex> lock(leaf_lock(variable.impl()));
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
  Accumulators& t = accumulators();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.by_leaf.find(leaf.impl());
  // A count of 0: the node is being destroyed right now and will erase itself (its ~Node
  // waits for this lock, so the object is still there to look at).
  if (it != t.by_leaf.end())
    if (NodeRef alive = NodeRef::try_retain(it->second)) return alive;
  auto node = make_ref<AccumulateGrad>(leaf);
  t.by_leaf[leaf.impl()] = node.get();
  t.leaf_of[node.get()] = leaf.impl();
  return node;
}

void forget_accumulator(const Node* node) {
  Accumulators& t = accumulators();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto back = t.leaf_of.find(node);
  if (back == t.leaf_of.end()) return;
  auto it = t.by_leaf.find(back->second);
  if (it != t.by_leaf.end() && it->second == node) t.by_leaf.erase(it);
  t.leaf_of.erase(back);
}

}  // namespace autograd::detail
}  // namespace kiln
