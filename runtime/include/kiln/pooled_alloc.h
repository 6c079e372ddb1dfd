#ifndef KILN_RUNTIME_INCLUDE_KILN_POOLED_ALLOC_H_
#define KILN_RUNTIME_INCLUDE_KILN_POOLED_ALLOC_H_
// Small blocks from per-thread free lists by size class (runtime/src/core/pooled_alloc.cpp), for
// what every recorded op allocates: its autograd node and the node's edge and output lists. A
// recorded op on a small tensor made five trips through malloc and free, a visible share of it.
#include <cstddef>

namespace kiln::detail {

// Blocks of up to 1 KiB come from 16 size classes (64-byte steps); larger ones from malloc.
// A block may be freed on any thread (it joins that thread's list); `bytes` must be the size
// it was allocated with.
void* pooled_allocate(size_t bytes);
void pooled_deallocate(void* p, size_t bytes) noexcept;

// A standard allocator over those blocks (for std::vector and the like).
template <typename T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <typename U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(pooled_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pooled_deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PooledAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const PooledAllocator<U>&) const noexcept { return false; }
};

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_INCLUDE_KILN_POOLED_ALLOC_H_
