// Gradients kept for non-leaf tensors that called retain_grad(). A tensor cannot be
// referenced from its own grad_fn without a cycle, so the engine parks each gradient under
// (node, output) and the tensor collects it on its next .grad() access.
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>
#include "internal.h"
#include "kiln/gen/api/clone.h"

namespace kiln::autograd::detail {

namespace {
struct Slot {
  uint32_t output_nr;
  Tensor pending;  // gradients since the tensor last looked, summed
};
// Never destroyed, so graphs freed during static destruction can still look here.
struct Retained {
  std::mutex mutex;
  std::unordered_map<const Node*, std::vector<Slot>> slots;
};
Retained& retained() {
  static auto* table = new Retained();
  return *table;
}
std::atomic<size_t> retained_count{0};  // lets ~Node and the engine skip the lock
}  // namespace

void retain_output(const Node* fn, uint32_t output_nr) {
  Retained& r = retained();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slots = r.slots[fn];
  for (const Slot& s : slots)
    if (s.output_nr == output_nr) return;
  slots.push_back({output_nr, Tensor()});
  retained_count.store(r.slots.size(), std::memory_order_relaxed);
}

bool has_retained(const Node* fn) {
  if (retained_count.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(retained().mutex);
  return retained().slots.count(fn) != 0;
}

void stash_retained(const Node* fn, const TensorBaseList& grads) {
  // Arithmetic runs outside the lock: freeing an old tensor may run ~Node, which locks.
  std::vector<std::pair<uint32_t, Tensor>> work;
  {
    std::lock_guard<std::mutex> lock(retained().mutex);
    auto it = retained().slots.find(fn);
    if (it == retained().slots.end()) return;
    for (Slot& s : it->second)
      if (s.output_nr < grads.size() && grads[s.output_nr].defined())
        work.emplace_back(s.output_nr, std::exchange(s.pending, Tensor()));
  }
  for (auto& [nr, pending] : work) {
    // A copy: the engine passes the same buffer on, and a leaf may later add into it.
    const Tensor g = grads[nr];
    pending = pending.defined() ? pending + g : clone(g);
  }
  std::lock_guard<std::mutex> lock(retained().mutex);
  auto it = retained().slots.find(fn);
  if (it == retained().slots.end()) return;
  for (auto& [nr, pending] : work)
    for (Slot& s : it->second)
      if (s.output_nr == nr) std::swap(s.pending, pending);  // a racing value leaves with `work`
}

Tensor take_retained(const Node* fn, uint32_t output_nr) {
  std::lock_guard<std::mutex> lock(retained().mutex);
  auto it = retained().slots.find(fn);
  if (it == retained().slots.end()) return Tensor();
  for (Slot& s : it->second)
    if (s.output_nr == output_nr) return std::exchange(s.pending, Tensor());
  return Tensor();
}

void forget_retained(const Node* fn) {
  std::vector<Slot> dying;  // destroyed outside the lock: a pending gradient may own nodes
  {
    std::lock_guard<std::mutex> lock(retained().mutex);
    auto it = retained().slots.find(fn);
    if (it == retained().slots.end()) return;
    dying = std::move(it->second);
    retained().slots.erase(it);
    retained_count.store(retained().slots.size(), std::memory_order_relaxed);
  }
}

void forget_retained_output(const Node* fn, uint32_t output_nr) {
  if (retained_count.load(std::memory_order_relaxed) == 0) return;
  Tensor dying;  // destroyed outside the lock: it may own `fn` and other nodes
  std::lock_guard<std::mutex> lock(retained().mutex);
  auto it = retained().slots.find(fn);
  if (it == retained().slots.end()) return;
  auto& slots = it->second;
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].output_nr == output_nr) {
      dying = std::move(slots[i].pending);
      slots.erase(slots.begin() + i);
      break;
    }
  if (slots.empty()) {
    retained().slots.erase(it);
    retained_count.store(retained().slots.size(), std::memory_order_relaxed);
  }
}

}  // namespace kiln::autograd::detail
