// Node lifetime: creation order for the engine's queue, and iterative destruction so a
// graph that is a long chain does not overflow the stack when it is freed.
#include <atomic>
#include <vector>
#include "internal.h"

namespace kiln {

namespace {
// Creation order, for the engine's ready queue (later nodes first). Each thread takes numbers
// from the shared counter a block at a time, so its nodes count up without an atomic per node
// (the order between threads was never more than the race between them).
std::atomic<uint64_t> sequence_blocks{0};

uint64_t next_sequence_nr() {
  constexpr uint64_t kBlock = 1024;
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = sequence_blocks.fetch_add(kBlock, std::memory_order_relaxed);
    end = next + kBlock;
  }
  return next++;
}

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

Node::Node() : sequence_nr(next_sequence_nr()) {}

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
