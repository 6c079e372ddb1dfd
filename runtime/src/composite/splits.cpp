// stack, split and chunk, composed of unsqueeze, cat and narrow (autograd records the parts).
#include <algorithm>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/chunk.h"
#include "kiln/gen/api/split.h"
#include "kiln/gen/api/stack.h"
#include "list_limits.h"

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
  // ceil(size / split_size) pieces (one for an empty dim), counted without forming
  // start + split_size, which overflows for a split_size near INT64_MAX
  const int64_t size = self.size(d), pieces = size == 0 ? 1 : (size - 1) / split_size + 1;
  check_list_length("split", "split_size", pieces);
  TensorList parts;
  parts.reserve(size_t(pieces));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    parts.push_back(self.narrow(d, start, std::min(split_size, size - start)));
  }
  return parts;
}

TensorList chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  KILN_CHECK(chunks > 0, ValueError, "chunk", "chunks", "expected a positive number of chunks, got ", chunks);
  const int64_t d = wrap_dim(dim, self.dim(), "chunk");
  const int64_t size = self.size(d) == 0 ? 0 : (self.size(d) - 1) / chunks + 1;  // ceil, no overflow
  return kiln::split(self, std::max<int64_t>(size, 1), d);
}

}  // namespace kiln::composite
