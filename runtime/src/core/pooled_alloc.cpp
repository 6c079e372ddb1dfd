// Size classes over ObjectPool (object_pool.h): class k holds blocks of 64 * (k + 1) bytes.
#include "kiln/pooled_alloc.h"

#include <algorithm>
#include <array>
#include <new>
#include <utility>
#include "object_pool.h"

namespace kiln::detail {
namespace {

constexpr size_t kStep = 64, kClasses = 16;

template <size_t... K>
constexpr auto allocators(std::index_sequence<K...>) {
  using Alloc = void* (*)();
  return std::array<Alloc, kClasses>{&ObjectPool<kStep * (K + 1)>::allocate...};
}
template <size_t... K>
constexpr auto deallocators(std::index_sequence<K...>) {
  using Dealloc = void (*)(void*);
  return std::array<Dealloc, kClasses>{&ObjectPool<kStep * (K + 1)>::deallocate...};
}

constexpr auto kAllocate = allocators(std::make_index_sequence<kClasses>());
constexpr auto kDeallocate = deallocators(std::make_index_sequence<kClasses>());

// The class of a block of `bytes` (kClasses: too large for one).
size_t size_class(size_t bytes) { return bytes == 0 ? 0 : std::min((bytes - 1) / kStep, kClasses); }

}  // namespace

void* pooled_allocate(size_t bytes) {
  const size_t k = size_class(bytes);
  return k < kClasses ? kAllocate[k]() : ::operator new(bytes);
}

void pooled_deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  const size_t k = size_class(bytes);
  if (k < kClasses) kDeallocate[k](p);
  else ::operator delete(p);
}

}  // namespace kiln::detail
