#ifndef KILN_RUNTIME_INCLUDE_KILN_INTRUSIVE_PTR_H_
#define KILN_RUNTIME_INCLUDE_KILN_INTRUSIVE_PTR_H_
// Intrusive reference counting: the count lives in the object, no control block.
#include <atomic>
#include <cstdint>
#include <utility>

namespace kiln {

class RefCounted {
 public:
  // A type whose objects some table finds by raw pointer and revives with Ref::try_retain sets
  // this: its last reference must then always be released with an atomic decrement.
  static constexpr bool kRevivedByRawPointer = false;

  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;
  uint32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  template <typename T> friend class Ref;
  mutable std::atomic<uint32_t> refs_{0};
};

// Ref's tag for an object fresh from `new`, which no other thread can see yet.
struct AdoptNew {};

template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  explicit Ref(T* p) : p_(p) { retain(); }
  // The first reference to a new object: its count is set, not incremented (every atomic
  // read-modify-write is a visible share of a one-element op).
  Ref(T* p, AdoptNew) : p_(p) {
    if (p_) p_->refs_.store(1, std::memory_order_relaxed);
  }
  Ref(const Ref& o) : p_(o.p_) { retain(); }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(const Ref<U>& o) : p_(o.get()) { retain(); }
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  Ref(Ref<U>&& o) noexcept : p_(o.release()) {}
  ~Ref() { reset(); }
  Ref& operator=(const Ref& o) { Ref(o).swap(*this); return *this; }
  Ref& operator=(Ref&& o) noexcept { Ref(std::move(o)).swap(*this); return *this; }
  void swap(Ref& o) noexcept { std::swap(p_, o.p_); }
  void reset() {
    if (p_ && release_last()) delete p_;
    p_ = nullptr;
  }
  T* release() { T* p = p_; p_ = nullptr; return p; }  // caller takes over one reference
  // A new reference to `p` unless its count already reached zero (it is being destroyed).
  // For non-owning tables whose entries the destructor erases under the table's lock: a
  // plain Ref(p) after checking use_count() races with the last release.
  static Ref try_retain(T* p) {
    Ref r;
    uint32_t n = p->refs_.load(std::memory_order_relaxed);
    while (n != 0 && !p->refs_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) {
    }
    if (n != 0) r.p_ = p;
    return r;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& o) const { return p_ == o.p_; }
  bool operator!=(const Ref& o) const { return p_ != o.p_; }
  bool unique() const { return p_ && p_->use_count() == 1; }

 private:
  void retain() { if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed); }
  // Drops this reference; true when it was the last. A count of 1 is this reference alone: no
  // other thread holds one to copy, so it goes without the atomic decrement (the acquire load
  // still orders every earlier release before the delete), unless a table may revive the object.
  bool release_last() {
    if constexpr (!T::kRevivedByRawPointer)
      if (p_->refs_.load(std::memory_order_acquire) == 1) return true;
    return p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  T* p_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) { return Ref<T>(new T(std::forward<Args>(args)...), AdoptNew{}); }

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_INTRUSIVE_PTR_H_
