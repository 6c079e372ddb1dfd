// AccumulateGrad: the sink of a leaf's gradient, and the per-leaf cache of that node.
#include <mutex>
#include "hooks.h"
#include "kiln/gen/api/clone.h"

namespace kiln {

namespace {
// Graphs on several threads may share a leaf: its .grad and its cached accumulator are updated
// under locks striped by leaf, so unrelated leaves do not contend. Two sets: replacing .grad can
// free a graph holding this leaf's accumulator, whose destructor takes the cache lock.
std::mutex& stripe(std::mutex* stripes, const TensorImpl* leaf) {
  return stripes[(reinterpret_cast<uintptr_t>(leaf) >> 6) % 64];
}
std::mutex& leaf_lock(const TensorImpl* leaf) {
  static std::mutex stripes[64];
  return stripe(stripes, leaf);
}
std::mutex& cache_lock(const TensorImpl* leaf) {
  static std::mutex stripes[64];
  return stripe(stripes, leaf);
}
}  // namespace

AccumulateGrad::AccumulateGrad(Tensor var) : variable(std::move(var)) {
  // As PyTorch: run as soon as ready, freeing the buffer early.
  sequence_nr = autograd::detail::kAccumulatorSequenceNr;
  num_outputs = 1;
  output_meta.push_back({DimVector(variable.sizes()), variable.dtype(), variable.device()});
}


AccumulateGrad::~AccumulateGrad() {
  // Runs while `variable` still holds the leaf. A newer accumulator may already have replaced
  // this one (a lookup saw our count at zero): then the slot is not ours to clear.
  std::lock_guard<std::mutex> lock(cache_lock(variable.impl()));
  AutogradMeta* meta = variable.impl()->autograd();
  if (meta && meta->accumulator == this) meta->accumulator = nullptr;
}

TensorBaseList AccumulateGrad::apply(TensorBaseList&& grads) {
  if (grads.empty() || !grads[0].defined()) return {};
  accumulate(std::move(grads[0]));
  // After the update and outside its lock: a hook may read .grad or run ops.
  if (AutogradMeta* meta = variable.impl()->autograd())
    if (meta->hooks && !meta->hooks->post_accumulate.empty()) {
      std::shared_ptr<autograd::Hooks> hooks = meta->hooks;
      autograd::run_post_accumulate_hooks(*hooks, variable);
    }
  return {};
}

void AccumulateGrad::accumulate(Tensor g) {
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
      slot = g.impl()->autograd() ? Tensor(autograd::detail::alias(g)) : std::move(g);
    } else {
      slot = clone(g.impl()->autograd() ? Tensor(autograd::detail::alias(g)) : g);
    }
  } else if (!GradMode::is_enabled() && slot.is_contiguous() && slot.dtype() == g.dtype() && !slot.requires_grad()) {
    slot.add_(g);  // the common case of a second backward: no new allocation
  } else {
    slot = slot + g;
  }
}

namespace autograd::detail {

NodeRef grad_accumulator(const TensorBase& leaf) {
  // The cache lives in the leaf itself (no table to search): PyTorch's weak grad_accumulator_.
  std::lock_guard<std::mutex> lock(cache_lock(leaf.impl()));
  AutogradMeta& meta = leaf.impl()->autograd_or_create();
  // A count of 0: that node is being destroyed right now; its destructor waits for this lock
  // and then leaves the slot alone, since it will hold the new node.
  if (meta.accumulator)
    if (NodeRef alive = NodeRef::try_retain(static_cast<Node*>(meta.accumulator))) return alive;
  auto node = make_ref<AccumulateGrad>(Tensor(leaf));
  meta.accumulator = node.get();
  return node;
}

}  // namespace autograd::detail
}  // namespace kiln
