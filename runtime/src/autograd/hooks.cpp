// Hooks: registering them on tensors and nodes, removing them, and running them for the engine
// (which calls these only for nodes that have hooks: a node without any costs a null check).
#include "hooks.h"

#include <algorithm>

namespace kiln {

namespace autograd {

namespace {
template <typename List>
bool erase_id(List& list, uint64_t id, bool tombstone) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i].id == id) {
      if (tombstone) list[i].fn = nullptr;
      else list.erase(list.begin() + long(i));
      return true;
    }
  return false;
}

template <typename List>
void drop_removed(List& list) {
  list.erase(std::remove_if(list.begin(), list.end(), [](const auto& e) { return !e.fn; }), list.end());
}

// A replacement gradient must look like the one it replaces (PyTorch's check_single_result).
void check_replacement(const TensorBase& value, const TensorBase& result, const char* op, size_t hook, size_t nr) {
  KILN_CHECK(value.defined(), AutogradError, op, "", "hook ", hook, " can't replace an undefined gradient ", nr,
             " with a defined one");
  KILN_CHECK(value.dtype() == result.dtype() && value.device() == result.device(), AutogradError, op, "", "hook ", hook,
             " has changed the type of gradient ", nr, " (was ", dtype_name(value.dtype()), " on ",
             value.device().str(), ", got ", dtype_name(result.dtype()), " on ", result.device().str(), ")");
  KILN_CHECK(value.sizes().equals(result.sizes()), AutogradError, op, "", "hook ", hook,
             " has changed the size of gradient ", nr, " (was ", shape_str(value.sizes()), ", got ",
             shape_str(result.sizes()), ")");
}
}  // namespace

void Hooks::remove_hook(uint64_t id) {
  bool tombstone = running_ > 0;
  bool found = erase_id(tensor, id, tombstone) || erase_id(pre, id, tombstone) || erase_id(post, id, tombstone) ||
               erase_id(post_accumulate, id, tombstone);
  has_removed_ = has_removed_ || (found && tombstone);
}

bool Hooks::has_tensor_hook(uint32_t output_nr) const {
  for (const auto& e : tensor)
    if (e.output_nr == output_nr && e.fn) return true;
  return false;
}

void Hooks::compact() {
  drop_removed(tensor);
  drop_removed(pre);
  drop_removed(post);
  drop_removed(post_accumulate);
  has_removed_ = false;
}

Hooks::Running::~Running() {
  if (--h_.running_ == 0 && h_.has_removed_) h_.compact();
}

void run_tensor_hooks(Hooks& hooks, TensorBaseList& grads) {
  Hooks::Running running(hooks);
  const size_t n = hooks.tensor.size();  // hooks added by a hook run from the next backward on
  for (size_t i = 0; i < n; ++i) {
    Hooks::TensorHook fn = hooks.tensor[i].fn;  // a copy: a hook may register another
    const uint32_t nr = hooks.tensor[i].output_nr;
    if (!fn || nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor result = fn(Tensor(grads[nr]));
    if (!result.defined()) continue;  // keep the gradient
    check_replacement(grads[nr], result, "register_hook", i, nr);
    grads[nr] = std::move(result);
  }
}

void run_pre_hooks(Hooks& hooks, TensorBaseList& grads, const Node& node) {
  Hooks::Running running(hooks);
  const size_t n = hooks.pre.size();
  for (size_t i = 0; i < n; ++i) {
    Node::PreHook fn = hooks.pre[i].fn;
    if (!fn) continue;
    TensorBaseList result = fn(grads);
    if (result.empty()) continue;
    KILN_CHECK(result.size() == grads.size(), AutogradError, node.name(), "", "pre-hook ", i, " returned ",
               result.size(), " gradients, expected ", grads.size());
    for (size_t k = 0; k < result.size(); ++k)
      if (result[k].defined() && k < node.output_meta.size())
        KILN_CHECK(result[k].sizes().equals(node.output_meta[k].sizes), AutogradError, node.name(), "", "pre-hook ", i,
                   " returned a gradient of shape ", shape_str(result[k].sizes()), " for output ", k, " of shape ",
                   shape_str(node.output_meta[k].sizes));
    grads = std::move(result);
  }
}

void run_post_hooks(Hooks& hooks, TensorBaseList& grad_inputs, const TensorBaseList& grad_outputs, const Node& node) {
  Hooks::Running running(hooks);
  const size_t n = hooks.post.size();
  for (size_t i = 0; i < n; ++i) {
    Node::PostHook fn = hooks.post[i].fn;
    if (!fn) continue;
    TensorBaseList result = fn(grad_inputs, grad_outputs);
    if (result.empty()) continue;
    KILN_CHECK(result.size() == grad_inputs.size(), AutogradError, node.name(), "", "hook ", i, " returned ",
               result.size(), " gradients, expected ", grad_inputs.size());
    grad_inputs = std::move(result);
  }
}

void run_post_accumulate_hooks(Hooks& hooks, Tensor leaf) {
  Hooks::Running running(hooks);
  const size_t n = hooks.post_accumulate.size();
  for (size_t i = 0; i < n; ++i) {
    Hooks::PostAccumulateHook fn = hooks.post_accumulate[i].fn;
    if (fn) fn(leaf);
  }
}

}  // namespace autograd

const std::shared_ptr<autograd::Hooks>& Node::hooks_or_create() {
  if (!hooks_) hooks_ = std::make_shared<autograd::Hooks>();
  return hooks_;
}

autograd::RemovableHandle Node::register_prehook(PreHook hook) {
  KILN_CHECK(bool(hook), ValueError, "register_prehook", "hook", "empty function");
  const auto& hooks = hooks_or_create();
  uint64_t id = hooks->next_id();
  hooks->pre.push_back({id, std::move(hook)});
  return autograd::RemovableHandle(hooks, id);
}

autograd::RemovableHandle Node::register_hook(PostHook hook) {
  KILN_CHECK(bool(hook), ValueError, "register_hook", "hook", "empty function");
  const auto& hooks = hooks_or_create();
  uint64_t id = hooks->next_id();
  hooks->post.push_back({id, std::move(hook)});
  return autograd::RemovableHandle(hooks, id);
}

autograd::RemovableHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  KILN_CHECK(defined(), ValueError, "register_hook", "self", "undefined tensor");
  KILN_CHECK(bool(hook), ValueError, "register_hook", "hook", "empty function");
  KILN_CHECK(requires_grad(), AutogradError, "register_hook", "self",
             "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& meta = impl_->autograd_or_create();
  // A non-leaf's gradient is what its grad_fn receives at its output slot (PyTorch's tensor
  // pre-hook on grad_fn); a leaf's is what its accumulator receives.
  std::shared_ptr<autograd::Hooks> hooks;
  if (meta.grad_fn) hooks = meta.grad_fn->hooks_or_create();
  else if (meta.hooks) hooks = meta.hooks;
  else hooks = meta.hooks = std::make_shared<autograd::Hooks>();
  uint64_t id = hooks->next_id();
  hooks->tensor.push_back({id, std::move(hook), meta.grad_fn ? meta.output_nr : 0});
  return autograd::RemovableHandle(hooks, id);
}

autograd::RemovableHandle Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const {
  const char* op = "register_post_accumulate_grad_hook";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(bool(hook), ValueError, op, "hook", "empty function");
  KILN_CHECK(requires_grad(), AutogradError, op, "self",
             "cannot register a hook on a tensor that doesn't require gradient");
  KILN_CHECK(is_leaf(), AutogradError, op, "self",
             "post accumulate grad hooks cannot be registered on non-leaf tensors");
  AutogradMeta& meta = impl_->autograd_or_create();
  if (!meta.hooks) meta.hooks = std::make_shared<autograd::Hooks>();
  uint64_t id = meta.hooks->next_id();
  meta.hooks->post_accumulate.push_back({id, std::move(hook)});
  return autograd::RemovableHandle(meta.hooks, id);
}

}  // namespace kiln
