// Node lifetime: creation order for the engine's queue, and iterative destruction so a
// graph that is a long chain does not overflow the stack when it is freed.
#include <atomic>
#include <vector>
#include "internal.h"

namespace kiln {

namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}

Node::Node() : sequence_nr(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() {
  if (autograd::detail::has_retained(this)) autograd::detail::forget_retained(this);
  // Children whose last reference is ours are parked and freed by the outermost
  // destructor in a loop instead of recursively. The list lives on that destructor's
  // stack; a plain thread_local pointer has no destruction-order trouble at exit.
  thread_local std::vector<NodeRef>* doomed = nullptr;
  std::vector<NodeRef> mine;
  std::vector<NodeRef>* list = doomed ? doomed : &mine;
  for (Edge& e : next_edges)
    if (e.fn && e.fn.unique()) list->push_back(std::move(e.fn));
  next_edges.clear();
  if (list != &mine) return;
  doomed = &mine;
  while (!mine.empty()) {
    NodeRef n = std::move(mine.back());
    mine.pop_back();
    n.reset();
  }
  doomed = nullptr;
}

}  // namespace kiln
