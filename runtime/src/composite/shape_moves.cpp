// Shape ops composed of views and cat (issue 15's first slice): movedim, unflatten, the
// atleast_Nd family, hstack/vstack/dstack/column_stack, unbind and split_with_sizes, with
// PyTorch 1.13's semantics and messages. Autograd and forward AD record the parts.
#include <algorithm>
#include <string>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/atleast_1d.h"
#include "kiln/gen/api/atleast_2d.h"
#include "kiln/gen/api/atleast_3d.h"
#include "kiln/gen/api/cat.h"
#include "list_limits.h"

namespace kiln::composite {

Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  KILN_CHECK(source.size() == destination.size(), ValueError, "movedim", "destination",
             "Invalid source or destination dims: source (", shape_str(source),
             " dims) should contain the same number "
             "of dims as destination (",
             shape_str(destination), " dims)");
  const int64_t n = self.dim();
  if (n == 0) {  // a 0-d tensor has one place, as PyTorch's wrap_dim: 0 and -1 name it
    for (size_t i = 0; i < source.size(); ++i) {
      wrap_dim(source[i], n, "movedim", "source");
      wrap_dim(destination[i], n, "movedim", "destination");
    }
    KILN_CHECK(source.size() <= 1, ValueError, "movedim", "source", "repeated dim in `source` (", shape_str(source),
               ")");
    return self.permute(std::vector<int64_t>{});
  }
  std::vector<int64_t> perm(size_t(n), -1);
  std::vector<bool> src_used(size_t(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], n, "movedim", "source");
    const int64_t d = wrap_dim(destination[i], n, "movedim", "destination");
    KILN_CHECK(!src_used[size_t(s)], ValueError, "movedim", "source", "repeated dim in `source` (", shape_str(source),
               ")");
    KILN_CHECK(perm[size_t(d)] < 0, ValueError, "movedim", "destination", "repeated dim in `destination` (",
               shape_str(destination), ")");
    src_used[size_t(s)] = true;
    perm[size_t(d)] = s;
  }
  // the dims not moved keep their order in the places left free
  int64_t next = 0;
  for (int64_t& p : perm) {
    if (p >= 0) continue;
    while (src_used[size_t(next)]) ++next;
    p = next++;
  }
  return self.permute(perm);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  const int64_t d = wrap_dim(dim, self.dim(), "unflatten");
  KILN_CHECK(!sizes.empty(), ValueError, "unflatten", "sizes", "unflatten: sizes must be non-empty");
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      KILN_CHECK(infer < 0, ValueError, "unflatten", "sizes", "only one dimension can be inferred");
      infer = int64_t(i);
    } else {
      KILN_CHECK(sizes[i] >= 0, ValueError, "unflatten", "sizes", "invalid shape dimension ", sizes[i]);
      known *= sizes[i];
    }
  }
  std::vector<int64_t> inner(sizes.begin(), sizes.end());
  const int64_t size = self.size(d);
  if (infer >= 0 && known != 0 && size % known == 0) inner[size_t(infer)] = size / known;
  int64_t product = 1;
  for (int64_t s : inner) product *= s;
  KILN_CHECK(product == size, ValueError, "unflatten", "sizes", "unflatten: Provided sizes ", shape_str(sizes),
             " don't multiply up to the size of dim ", dim, " (", size, ") in the input tensor");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return self.view(shape);
}

Tensor atleast_1d(const Tensor& self) { return self.dim() == 0 ? self.reshape({1}) : self; }

Tensor atleast_2d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1});
  return self.dim() == 1 ? self.unsqueeze(0) : self;
}

Tensor atleast_3d(const Tensor& self) {
  switch (self.dim()) {
    case 0:
      return self.reshape({1, 1, 1});
    case 1:
      return self.unsqueeze(0).unsqueeze(-1);
    case 2:
      return self.unsqueeze(-1);
    default:
      return self;
  }
}

namespace {
TensorList each(const TensorList& tensors, Tensor (*fn)(const Tensor&), const char* op) {
  KILN_CHECK(!tensors.empty(), ValueError, op, "tensors", op, " expects a non-empty TensorList");
  TensorList out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(fn(t));
  return out;
}
}  // namespace

Tensor hstack(const TensorList& tensors) {
  TensorList parts = each(tensors, &kiln::atleast_1d, "hstack");
  return kiln::cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const TensorList& tensors) { return kiln::cat(each(tensors, &kiln::atleast_2d, "vstack"), 0); }

Tensor dstack(const TensorList& tensors) { return kiln::cat(each(tensors, &kiln::atleast_3d, "dstack"), 2); }

Tensor column_stack(const TensorList& tensors) {
  KILN_CHECK(!tensors.empty(), ValueError, "column_stack", "tensors", "column_stack expects a non-empty TensorList");
  TensorList parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  return kiln::cat(parts, 1);
}

TensorList unbind(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  check_list_length("unbind", "self", self.size(d));
  TensorList parts;
  parts.reserve(size_t(self.size(d)));
  for (int64_t i = 0; i < self.size(d); ++i) parts.push_back(self.select(d, i));
  return parts;
}

TensorList split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    KILN_CHECK(s >= 0, ValueError, "split_with_sizes", "split_sizes",
               "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
               shape_str(split_sizes));
    total += s;
  }
  KILN_CHECK(total == self.size(d), ValueError, "split_with_sizes", "split_sizes",
             "split_with_sizes expects split_sizes to sum exactly to ", self.size(d),
             " (input tensor's size at dimension ", d, "), but got split_sizes=", shape_str(split_sizes));
  TensorList parts;
  parts.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    parts.push_back(self.narrow(d, start, s));
    start += s;
  }
  return parts;
}

}  // namespace kiln::composite
