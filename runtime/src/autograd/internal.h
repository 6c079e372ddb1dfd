#ifndef KILN_RUNTIME_SRC_AUTOGRAD_INTERNAL_H_
#define KILN_RUNTIME_SRC_AUTOGRAD_INTERNAL_H_
// Autograd state shared between the engine, nodes and Tensor's autograd methods.
// Private to runtime/src/autograd.
#include "kiln/core.h"

namespace kiln::autograd::detail {

// The one AccumulateGrad of a leaf while any graph still holds it, so every use of the
// leaf feeds the same node (gradients add up in one input buffer, grad() finds it).
NodeRef grad_accumulator(const TensorBase& leaf);
inline constexpr uint64_t kAccumulatorSequenceNr = UINT64_MAX;

// True when `from` broadcasts to `to` (trailing alignment, size-1 dims stretch).
inline bool expandable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[lead + i] && from[i] != 1) return false;
  return true;
}

// A tensor over the same storage (and version counter) without autograd metadata.
TensorBase alias(const TensorBase& t);
// alias(t) whose gradient flows to output `output_nr` of `fn`.
TensorBase alias_with_history(const TensorBase& t, const NodeRef& fn, uint32_t output_nr);

// retain_grad() on non-leaves. Tensors do not own their grad_fn's lifetime slot, so the
// engine parks gradients here, keyed by (node, output); Tensor::grad() collects them.
// Entries die with their node.
void retain_output(const Node* fn, uint32_t output_nr);
bool has_retained(const Node* fn);
void stash_retained(const Node* fn, const TensorBaseList& grads);
Tensor take_retained(const Node* fn, uint32_t output_nr);
void forget_retained(const Node* fn);
// The tensor that retained output `output_nr` of `fn` is gone: nobody can collect it. Its
// parked gradient may (under create_graph) hold a graph that holds `fn`: drop it now.
void forget_retained_output(const Node* fn, uint32_t output_nr);

}  // namespace kiln::autograd::detail
#endif  // KILN_RUNTIME_SRC_AUTOGRAD_INTERNAL_H_
