#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_REMOVABLE_HANDLE_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_REMOVABLE_HANDLE_H_
// What every register_*hook returns. Its own header because kiln/tensor.h declares
// Tensor::register_hook and must see the complete type (clang checks a template's
// non-dependent calls where the template is defined).
#include <cstdint>
#include <memory>

namespace kiln::autograd {

// What a handle removes its hook from.
class HookRegistry {
 public:
  virtual ~HookRegistry() = default;
  virtual void remove_hook(uint64_t id) = 0;
};

// Returned by every register_*hook (PyTorch's RemovableHandle): remove() unregisters the hook.
// Removing twice, or after the tensor or node is gone, does nothing.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  RemovableHandle(std::weak_ptr<HookRegistry> registry, uint64_t id) : registry_(std::move(registry)), id_(id) {}
  void remove() {
    if (auto r = registry_.lock()) r->remove_hook(id_);
    registry_.reset();
  }
  uint64_t id() const { return id_; }

 private:
  std::weak_ptr<HookRegistry> registry_;
  uint64_t id_ = 0;
};
}  // namespace kiln::autograd
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_REMOVABLE_HANDLE_H_
