#ifndef KILN_RUNTIME_SRC_CORE_OBJECT_POOL_H_
#define KILN_RUNTIME_SRC_CORE_OBJECT_POOL_H_
// Per-thread free lists for the fixed-size objects every tensor needs (its TensorImpl and
// StorageImpl), so creating and dropping a small tensor does not go through malloc twice.
//
// Use: derive a final class and give it `operator new/delete` from ObjectPool<sizeof(Class)>.
// A class whose destructor is virtual is freed by its dynamic type's operator delete, so a
// Ref<TensorImpl> holding a pooled impl returns it to the pool.
#include <cstddef>
#include <cstdint>
#include <new>

namespace kiln::detail {

template <size_t Size>
class ObjectPool {
 public:
  static void* allocate() {
    FreeList& l = list_;
    if (Node* n = l.head) {
      l.head = n->next;
      --l.count;
      return n;
    }
    return ::operator new(Size);
  }

  static void deallocate(void* p) {
    FreeList& l = list_;
    if (!l.registered) register_thread(l);
    if (l.closed || l.count >= kMaxCached) {
      ::operator delete(p);
      return;
    }
    Node* n = static_cast<Node*>(p);
    n->next = l.head;
    l.head = n;
    ++l.count;
  }

 private:
  static_assert(Size >= sizeof(void*), "pooled objects hold a free-list link");
  static constexpr uint32_t kMaxCached = 4096;  // per thread; more goes back to malloc
  struct Node { Node* next; };
  // Trivially destructible, so it stays valid for frees that come after the drainer ran
  // (tensors released by later thread-exit or static destructors go straight to malloc).
  struct FreeList {
    Node* head;
    uint32_t count;
    bool registered, closed;
  };
  struct Drainer {
    ~Drainer() {
      FreeList& l = list_;
      while (Node* n = l.head) {
        l.head = n->next;
        ::operator delete(n);
      }
      l.count = 0;
      l.closed = true;
    }
  };
  static void register_thread(FreeList& l) {
    l.registered = true;
    thread_local Drainer drainer;  // frees this thread's cached objects when the thread ends
    (void)drainer;
  }
  static thread_local FreeList list_;
};

template <size_t Size>
thread_local typename ObjectPool<Size>::FreeList ObjectPool<Size>::list_{};

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_OBJECT_POOL_H_
