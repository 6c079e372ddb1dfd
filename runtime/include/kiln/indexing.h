#ifndef KILN_RUNTIME_INCLUDE_KILN_INDEXING_H_
#define KILN_RUNTIME_INCLUDE_KILN_INDEXING_H_
// libtorch's C++ tensor indexing, Python's x[...] spelled as a braced list:
//   using namespace kiln::indexing;
//   x.index({Slice(1, None, 2), 0, None, Ellipsis, idx, mask});   // x[1::2, 0, None, ..., idx, mask]
//   x.index_put_({Slice(), idx}, v);                                // x[:, idx] = v
// Integers select (the dim goes), slices narrow, None adds a dim of 1, Ellipsis stands for the
// dims no other entry names, true/false add a dim of 1 / 0. Without tensor entries the result is
// a view of x (x.index_put_ writes through it); int64 and bool/uint8 tensor entries then index
// that view with index.Tensor (a copy), as PyTorch. Under autograd the writes are recorded as
// in-place ops on views of x.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <variant>
#include "kiln/tensor.h"

namespace kiln::indexing {

// Python's None in an index list (a new dim of size 1), also a Slice's missing bound.
inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndex {};
inline constexpr EllipsisIndex Ellipsis{};

// start:stop:step; a missing bound is the start or end of the dim, step is positive.
class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step.value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

// One entry of an index list.
class TensorIndex {
 public:
  TensorIndex(std::nullopt_t) : v_(std::monostate{}) {}
  TensorIndex(EllipsisIndex) : v_(EllipsisIndex{}) {}
  TensorIndex(const char* text);  // "..." only (libtorch's spelling of Ellipsis)
  TensorIndex(const Slice& s) : v_(s) {}
  TensorIndex(const Tensor& t) : v_(t) {}
  TensorIndex(bool b) : v_(b) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  TensorIndex(I i) : v_(int64_t(i)) {}

  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_ellipsis() const { return std::holds_alternative<EllipsisIndex>(v_); }
  bool is_integer() const { return std::holds_alternative<int64_t>(v_); }
  bool is_boolean() const { return std::holds_alternative<bool>(v_); }
  bool is_slice() const { return std::holds_alternative<Slice>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  int64_t integer() const { return std::get<int64_t>(v_); }
  bool boolean() const { return std::get<bool>(v_); }
  const Slice& slice() const { return std::get<Slice>(v_); }
  const Tensor& tensor() const { return std::get<Tensor>(v_); }

 private:
  std::variant<std::monostate, EllipsisIndex, int64_t, bool, Slice, Tensor> v_;  // monostate: None
};

using TensorIndexList = ArrayRef<TensorIndex>;

// What Tensor::index / index_put_ with an index list run (runtime/src/tensor_indexing.cpp).
Tensor get_item(const Tensor& self, TensorIndexList indices);
void set_item(const Tensor& self, TensorIndexList indices, const Tensor& value);
void set_item(const Tensor& self, TensorIndexList indices, const Scalar& value);

}  // namespace kiln::indexing

#endif  // KILN_RUNTIME_INCLUDE_KILN_INDEXING_H_
