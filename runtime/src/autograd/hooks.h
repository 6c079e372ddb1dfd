#ifndef KILN_RUNTIME_SRC_AUTOGRAD_HOOKS_H_
#define KILN_RUNTIME_SRC_AUTOGRAD_HOOKS_H_
// The hooks of one node or of one leaf, and the engine's calls that run them. A node holds
// the gradient hooks of its non-leaf outputs (by output slot) and its own pre- and post-hooks;
// a leaf's AutogradMeta holds its gradient hooks and its post-accumulate hooks, read by the
// engine through the leaf's AccumulateGrad (which may be freed and made again between
// backward calls, while the hooks stay). Private to runtime/src/autograd.
#include <functional>
#include <memory>
#include <vector>
#include "internal.h"

namespace kiln::autograd {

struct Hooks final : HookRegistry {
  using TensorHook = std::function<Tensor(const Tensor&)>;
  using PostAccumulateHook = std::function<void(Tensor&)>;
  template <typename Fn>
  struct Entry {
    uint64_t id;
    Fn fn;                   // empty once removed while hooks were running
    uint32_t output_nr = 0;  // tensor hooks: which gradient of the node
  };
  std::vector<Entry<TensorHook>> tensor;
  std::vector<Entry<Node::PreHook>> pre;
  std::vector<Entry<Node::PostHook>> post;
  std::vector<Entry<PostAccumulateHook>> post_accumulate;

  uint64_t next_id() { return next_id_++; }
  void remove_hook(uint64_t id) override;
  bool has_tensor_hook(uint32_t output_nr) const;

  // While hooks run, a removal only empties its entry (the runner walks the lists by index);
  // the emptied entries are dropped when the last runner is done.
  class Running {
   public:
    explicit Running(Hooks& h) : h_(h) { ++h_.running_; }
    ~Running();

   private:
    Hooks& h_;
  };

 private:
  void compact();
  uint64_t next_id_ = 1;
  int running_ = 0;
  bool has_removed_ = false;
};

// The gradient hooks of `hooks` on `grads` (the gradients a node receives), in place: each
// hook of output slot i sees the previous one's result, undefined gradients are skipped.
void run_tensor_hooks(Hooks& hooks, TensorBaseList& grads);
// The node's pre-hooks on the gradients it receives (sized to its outputs).
void run_pre_hooks(Hooks& hooks, TensorBaseList& grads, const Node& node);
// The node's post-hooks on what apply returned (`grad_inputs`) and what it received.
void run_post_hooks(Hooks& hooks, TensorBaseList& grad_inputs, const TensorBaseList& grad_outputs, const Node& node);
// A leaf's post-accumulate hooks, after its .grad was updated.
void run_post_accumulate_hooks(Hooks& hooks, Tensor leaf);

}  // namespace kiln::autograd
#endif  // KILN_RUNTIME_SRC_AUTOGRAD_HOOKS_H_
