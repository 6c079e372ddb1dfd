// Node lifetime: creation order for the engine's queue, and iterative destruction so a
// graph that is a long chain does not overflow the stack when it is freed.
#include <atomic>
#include <vector>
#include "internal.h"

namespace kiln {

namespace {
std::atomic<uint64_t> next_sequence_nr{0};

// A stack of nodes to free: the first few live inline, so freeing a small graph (one op on a
// leaf: its node and the leaf's accumulator) allocates nothing.
class DoomedNodes {
 public:
  void push(NodeRef n) {
    if (inline_count_ < kInline) inline_[inline_count_++] = std::move(n);
    else more_.push_back(std::move(n));
  }
  bool empty() const { return inline_count_ == 0 && more_.empty(); }
  NodeRef pop() {
    if (!more_.empty()) {
      NodeRef n = std::move(more_.back());
      more_.pop_back();
      return n;
    }
    return std::move(inline_[--inline_count_]);
  }

 private:
  static constexpr size_t kInline = 4;
  NodeRef inline_[kInline];
  size_t inline_count_ = 0;
  std::vector<NodeRef> more_;
};
}  // namespace

Node::Node() : sequence_nr(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() {
  if (autograd::detail::has_retained(this)) autograd::detail::forget_retained(this);
  // Children whose last reference is ours are parked and freed by the outermost
  // destructor in a loop instead of recursively. The list lives on that destructor's
  // stack; a plain thread_local pointer has no destruction-order trouble at exit.
  thread_local DoomedNodes* doomed = nullptr;
  DoomedNodes mine;
  DoomedNodes* list = doomed ? doomed : &mine;
  for (Edge& e : next_edges)
    if (e.fn && e.fn.unique()) list->push(std::move(e.fn));
  next_edges.clear();
  if (list != &mine) return;
  doomed = &mine;
  while (!mine.empty()) mine.pop().reset();
  doomed = nullptr;
}

}  // namespace kiln
