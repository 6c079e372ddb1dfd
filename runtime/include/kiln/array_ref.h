#ifndef KILN_RUNTIME_INCLUDE_KILN_ARRAY_REF_H_
#define KILN_RUNTIME_INCLUDE_KILN_ARRAY_REF_H_
// Small non-owning and inline-owning sequences used for sizes, strides and dims.
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

namespace kiln {

// Non-owning view of a contiguous sequence (like std::span, implicit from common containers).
template <typename T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  ArrayRef(const T& single) : data_(&single), size_(1) {}
  // Lifetime: the initializer list must outlive the ArrayRef (true for call arguments, the
  // intended use: f({2, 3})), which GCC cannot see and warns about.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  constexpr ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <typename A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()), size_(v.size()) {}
  template <typename C, typename = decltype(std::declval<const C&>().data()),
            typename = std::enable_if_t<!std::is_same_v<C, std::vector<T>> &&
                                        std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const C&>().data())>>, T>>>
  ArrayRef(const C& c) : data_(c.data()), size_(c.size()) {}

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;

// Vector with N elements of inline storage; heap only beyond that. Trivially-copyable T only.
template <typename T, size_t N = 6>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values");

 public:
  SmallVector() = default;
  SmallVector(size_t n, T value = T()) { resize(n, value); }
  SmallVector(std::initializer_list<T> list) { assign(list.begin(), list.size()); }
  SmallVector(ArrayRef<T> ref) { assign(ref.data(), ref.size()); }
  template <typename A>
  SmallVector(const std::vector<T, A>& v) { assign(v.data(), v.size()); }
  SmallVector(const SmallVector& o) { assign(o.data(), o.size()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) { size_ = 0; assign(o.data(), o.size()); }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) { release(); steal(o); }
    return *this;
  }
  ~SmallVector() { release(); }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return ptr_; }
  T* end() { return ptr_ + size_; }
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }
  T& operator[](size_t i) { return ptr_[i]; }
  const T& operator[](size_t i) const { return ptr_[i]; }
  T& back() { return ptr_[size_ - 1]; }
  const T& back() const { return ptr_[size_ - 1]; }
  void clear() { size_ = 0; }
  void push_back(T v) {
    if (size_ == cap_) grow(cap_ * 2);
    ptr_[size_++] = v;
  }
  void pop_back() { --size_; }
  void resize(size_t n, T value = T()) {
    if (n > cap_) grow(n);
    for (size_t i = size_; i < n; ++i) ptr_[i] = value;
    size_ = n;
  }
  void insert(size_t pos, T v) {
    push_back(v);
    for (size_t i = size_ - 1; i > pos; --i) ptr_[i] = ptr_[i - 1];
    ptr_[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) ptr_[i] = ptr_[i + 1];
    --size_;
  }
  operator ArrayRef<T>() const { return ArrayRef<T>(ptr_, size_); }
  ArrayRef<T> ref() const { return ArrayRef<T>(ptr_, size_); }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool operator==(const SmallVector& o) const { return ref().equals(o.ref()); }
  bool operator!=(const SmallVector& o) const { return !(*this == o); }

 private:
  void assign(const T* src, size_t n) {
    if (n > cap_) grow(n);
    if (n) std::memcpy(ptr_, src, n * sizeof(T));
    size_ = n;
  }
  void grow(size_t n) {
    if (n < 2 * cap_) n = 2 * cap_;
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, ptr_, size_ * sizeof(T));
    release();
    ptr_ = p;
    cap_ = n;
  }
  void release() {
    if (ptr_ != inline_) std::free(ptr_);
    ptr_ = inline_;
    cap_ = N;
  }
  void steal(SmallVector& o) {
    if (o.ptr_ == o.inline_) {
      ptr_ = inline_;
      cap_ = N;
      size_ = o.size_;
      if (size_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    } else {
      ptr_ = o.ptr_;
      cap_ = o.cap_;
      size_ = o.size_;
      o.ptr_ = o.inline_;
      o.cap_ = N;
    }
    o.size_ = 0;
  }

  T inline_[N];
  T* ptr_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

using DimVector = SmallVector<int64_t, 6>;

// ATen's `int[]?`: either None or a list of ints. Implicit from {..}, a vector, one int or nullopt.
class OptIntList {
 public:
  OptIntList() = default;
  OptIntList(std::nullopt_t) {}
  OptIntList(std::initializer_list<int64_t> list) : has_(true), values_(list) {}
  OptIntList(int64_t single) : has_(true), values_({single}) {}
  OptIntList(int single) : has_(true), values_({int64_t(single)}) {}
  OptIntList(IntArrayRef ref) : has_(true), values_(ref) {}
  OptIntList(const std::vector<int64_t>& v) : has_(true), values_(v) {}
  bool has_value() const { return has_; }
  explicit operator bool() const { return has_; }
  IntArrayRef value() const { return values_.ref(); }
  IntArrayRef operator*() const { return values_.ref(); }

 private:
  bool has_ = false;
  DimVector values_;
};

// ATen's `float[]?` (libtorch's optional<ArrayRef<double>>): None or a list of doubles, as
// histogram's range. Implicit from {..}, a vector, an ArrayRef or nullopt.
class OptDoubleList {
 public:
  OptDoubleList() = default;
  OptDoubleList(std::nullopt_t) {}
  OptDoubleList(std::initializer_list<double> list) : has_(true), values_(list) {}
  OptDoubleList(ArrayRef<double> ref) : has_(true), values_(ref) {}
  OptDoubleList(const std::vector<double>& v) : has_(true), values_(v) {}
  bool has_value() const { return has_; }
  explicit operator bool() const { return has_; }
  ArrayRef<double> value() const { return values_.ref(); }
  ArrayRef<double> operator*() const { return values_.ref(); }

 private:
  bool has_ = false;
  SmallVector<double, 4> values_;
};

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_ARRAY_REF_H_
