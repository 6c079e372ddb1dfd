// stack, split and chunk, composed of unsqueeze, cat and narrow (autograd records the parts).
#include <algorithm>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/chunk.h"
#include "kiln/gen/api/split.h"
#include "kiln/gen/api/stack.h"

namespace kiln::composite {

Tensor stack(const TensorList& tensors, int64_t dim) {
  KILN_CHECK(!tensors.empty(), ValueError, "stack", "tensors", "expected a non-empty list of tensors");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return kiln::cat(parts, d);
}

TensorList split(const Tensor& self, int64_t split_size, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  KILN_CHECK(split_size > 0 || (split_size == 0 && self.size(d) == 0), ValueError, "split", "split_size",
             "expected a positive split_size, got ", split_size);
  TensorList parts;
  for (int64_t start = 0; start < self.size(d) || (start == 0 && self.size(d) == 0); start += split_size) {
    parts.push_back(self.narrow(d, start, std::min(split_size, self.size(d) - start)));
    if (split_size == 0) break;
  }
  return parts;
}

TensorList chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  KILN_CHECK(chunks > 0, ValueError, "chunk", "chunks", "expected a positive number of chunks, got ", chunks);
  const int64_t d = wrap_dim(dim, self.dim(), "chunk");
  const int64_t size = (self.size(d) + chunks - 1) / chunks;
  return kiln::split(self, std::max<int64_t>(size, 1), d);
}

}  // namespace kiln::composite
