// libtorch's tensor indexing with an index list (kiln/indexing.h): the entries that only
// reshape (integers, slices, None, Ellipsis, true/false) are applied first as views; the tensor
// entries are then gathered into one index.Tensor / index_put_ call on that view.
#include "kiln/indexing.h"
#include <cstring>
#include <vector>
#include "kiln/gen/api/index.h"
#include "kiln/gen/api/index_put.h"
#include "kiln/gen/api/index_put_.h"

namespace kiln {
namespace indexing {

TensorIndex::TensorIndex(const char* text) : v_(EllipsisIndex{}) {
  KILN_CHECK(text && std::strcmp(text, "...") == 0, IndexError, "index", "indices",
             "a string index must be \"...\" (Ellipsis), got \"", text ? text : "", "\"");
}

namespace {

// How many of self's dims the list names (Ellipsis stands for the rest).
int64_t named_dims(TensorIndexList indices) {
  int64_t n = 0;
  for (const TensorIndex& i : indices) {
    if (i.is_integer() || i.is_slice()) ++n;
    if (i.is_tensor()) {
      const DType t = i.tensor().dtype();
      n += (t == DType::Bool || t == DType::UInt8) ? i.tensor().dim() : 1;
    }
  }
  return n;
}

// The view the non-tensor entries describe, and the tensor entries by the dim of that view
// they index (an undefined Tensor where a dim is not indexed).
struct Applied {
  Tensor view;
  TensorList tensors;
};

Applied apply(const char* op, const Tensor& self, TensorIndexList indices) {
  int64_t ellipses = 0;
  for (const TensorIndex& i : indices) ellipses += i.is_ellipsis();
  KILN_CHECK(ellipses <= 1, IndexError, op, "indices", "an index can only have a single ellipsis ('...')");
  const int64_t named = named_dims(indices);
  KILN_CHECK(named <= self.dim(), IndexError, op, "indices", "too many indices for tensor of dimension ", self.dim(),
             " (got ", named, ")");
  Applied a{self, {}};
  int64_t dim = 0;  // the dim of a.view the next entry applies to
  const auto put_tensor = [&](const Tensor& t) {
    if (int64_t(a.tensors.size()) < dim) a.tensors.resize(size_t(dim));
    a.tensors.push_back(t);
  };
  for (const TensorIndex& i : indices) {
    if (i.is_integer()) {
      a.view = a.view.select(dim, i.integer());
    } else if (i.is_slice()) {
      const Slice& s = i.slice();
      KILN_CHECK(s.step() > 0, ValueError, op, "indices", "step must be greater than zero, got ", s.step());
      a.view = a.view.slice(dim, s.start(), s.stop(), s.step());
      ++dim;
    } else if (i.is_none()) {
      a.view = a.view.unsqueeze(dim);
      ++dim;
    } else if (i.is_ellipsis()) {
      dim += self.dim() - named;
    } else if (i.is_boolean()) {  // a new dim of 1 that true keeps and false empties, as PyTorch
      a.view = a.view.unsqueeze(dim);
      put_tensor(i.boolean() ? zeros({1}, TensorOptions(DType::Int64, self.device()))
                             : empty({0}, TensorOptions(DType::Int64, self.device())));
      ++dim;
    } else {
      const Tensor& t = i.tensor();
      const bool mask = t.dtype() == DType::Bool || t.dtype() == DType::UInt8;
      if (mask && t.dim() == 0) {  // a 0-d mask: a new dim of 1, kept or emptied by its value
        a.view = a.view.unsqueeze(dim);
        put_tensor(t.item<bool>() ? zeros({1}, TensorOptions(DType::Int64, self.device()))
                                  : empty({0}, TensorOptions(DType::Int64, self.device())));
        ++dim;
        continue;
      }
      put_tensor(t);
      dim += mask ? t.dim() : 1;
    }
  }
  return a;
}

}  // namespace

Tensor get_item(const Tensor& self, TensorIndexList indices) {
  Applied a = apply("index", self, indices);
  if (a.tensors.empty()) return a.view;
  return kiln::index(a.view, a.tensors);
}

void set_item(const Tensor& self, TensorIndexList indices, const Tensor& value) {
  Applied a = apply("index_put_", self, indices);
  const Tensor v = value.dtype() == self.dtype() && value.device() == self.device()
                       ? value
                       : value.to(self.device()).to(self.dtype());  // as x[...] = v casts v
  if (a.tensors.empty()) {
    a.view.copy_(v);
    return;
  }
  kiln::index_put_(a.view, a.tensors, v);
}

void set_item(const Tensor& self, TensorIndexList indices, const Scalar& value) {
  Applied a = apply("index_put_", self, indices);
  if (a.tensors.empty()) {
    a.view.fill_(value);
    return;
  }
  kiln::index_put_(a.view, a.tensors, full({}, value, TensorOptions(self.dtype(), self.device())));
}

}  // namespace indexing

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return indexing::get_item(*this, indexing::TensorIndexList(indices.begin(), indices.size()));
}
Tensor Tensor::index(ArrayRef<indexing::TensorIndex> indices) const { return indexing::get_item(*this, indices); }
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) {
  indexing::set_item(*this, indexing::TensorIndexList(indices.begin(), indices.size()), value);
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) {
  indexing::set_item(*this, indexing::TensorIndexList(indices.begin(), indices.size()), value);
  return *this;
}
Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) {
  indexing::set_item(*this, indices, value);
  return *this;
}
Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value) {
  indexing::set_item(*this, indices, value);
  return *this;
}

}  // namespace kiln
