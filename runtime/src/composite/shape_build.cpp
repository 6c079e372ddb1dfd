// Shape ops that rearrange or repeat a tensor, composed of flip, views, cat and expand with
// PyTorch 1.13's semantics and messages: fliplr/flipud, rot90, roll, repeat, tile,
// repeat_interleave. Autograd and forward AD record the parts.
#include <string>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/flip.h"

namespace kiln::composite {

Tensor fliplr(const Tensor& self) {
  KILN_CHECK(self.dim() >= 2, ShapeError, "fliplr", "self", "Input must be >= 2-d.");
  return kiln::flip(self, {1});
}

Tensor flipud(const Tensor& self) {
  KILN_CHECK(self.dim() >= 1, ShapeError, "flipud", "self", "Input must be >= 1-d.");
  return kiln::flip(self, {0});
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  const int64_t n = self.dim();
  KILN_CHECK(dims.size() == 2, ValueError, "rot90", "dims",
             "expected total rotation dims == 2, but got dims = ", dims.size());
  KILN_CHECK(n >= 2, ShapeError, "rot90", "self", "expected total dims >= 2, but got total dims = ", n);
  // PyTorch compares the dims as given: 0 and -2 of a 2-d tensor pass this check and fail later
  const int64_t gap = dims[0] > dims[1] ? dims[0] - dims[1] : dims[1] - dims[0];
  KILN_CHECK(gap != 0 && gap != n, ValueError, "rot90", "dims",
             "expected rotation dims to be different, but got dim0 = ", dims[0], " and dim1 = ", dims[1]);
  const int64_t d0 = wrap_dim(dims[0], n, "rot90", "dims"), d1 = wrap_dim(dims[1], n, "rot90", "dims");
  switch (((k % 4) + 4) % 4) {
    case 1:
      return kiln::flip(self, {d1}).transpose(d0, d1);
    case 2:
      return kiln::flip(self, {d0, d1});
    case 3:
      return kiln::flip(self, {d0}).transpose(d0, d1);
    default:
      return self.clone();
  }
}

namespace {
// One dim rolled: the last `shift` elements (mod size) move to the front, as two narrows and a cat.
Tensor roll_dim(const Tensor& self, int64_t shift, int64_t dim) {
  const int64_t size = self.size(dim);
  if (size == 0) return self.clone();
  const int64_t start = ((size - shift) % size + size) % size;
  if (start == 0) return self.clone();
  return kiln::cat({self.narrow(dim, start, size - start), self.narrow(dim, 0, start)}, dim);
}
}  // namespace

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  KILN_CHECK(!shifts.empty(), ValueError, "roll", "shifts", "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // roll the flattened tensor, then restore the shape
    if (self.numel() == 0) return self.clone();
    return roll_dim(self.reshape({-1}), shifts[0], 0).view(self.sizes());
  }
  KILN_CHECK(shifts.size() == dims.size(), ValueError, "roll", "dims",
             "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i)
    out = roll_dim(out, shifts[i], wrap_dim(dims[i], self.dim(), "roll", "dims"));
  return out;
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t n = int64_t(repeats.size()), pad = n - self.dim();
  KILN_CHECK(pad >= 0, ValueError, "repeat", "repeats",
             "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  // [r0, s0, r1, s1, ...] of self's [1, s0, 1, s1, ...] (padded with leading 1s) is an expand;
  // merging each pair is one copy
  std::vector<int64_t> paired, expanded, result;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = i < pad ? 1 : self.size(i - pad), r = repeats[size_t(i)];
    KILN_CHECK(r >= 0, ValueError, "repeat", "repeats", "Trying to create tensor with negative dimension ", r, ": ",
               shape_str(repeats));
    paired.insert(paired.end(), {1, s});
    expanded.insert(expanded.end(), {r, s});
    result.push_back(r * s);
  }
  return self.reshape(paired).expand(expanded).reshape(result);
}

Tensor tile(const Tensor& self, IntArrayRef dims) {
  if (int64_t(dims.size()) >= self.dim()) return self.repeat(dims);
  std::vector<int64_t> padded(size_t(self.dim()) - dims.size(), 1);  // leading dims repeat once
  padded.insert(padded.end(), dims.begin(), dims.end());
  return self.repeat(padded);
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  KILN_CHECK(repeats >= 0, ValueError, "repeat_interleave", "repeats", "repeats can not be negative");
  KILN_CHECK(!dim || self.dim() > 0, IndexError, "repeat_interleave", "dim", "Dimension specified as ", *dim,
             " but tensor has no dimensions");  // PyTorch's message (the fuzzer's out-of-bounds case)
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
  if (output_size)
    KILN_CHECK(*output_size == input.size(d) * repeats, ValueError, "repeat_interleave", "output_size",
               "allocated size does not match required size");
  // each element gets a new dim of `repeats` copies right after it, merged back into dim d
  std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
  sizes.insert(sizes.begin() + d + 1, repeats);
  return input.unsqueeze(d + 1).expand(sizes).flatten(d, d + 1);
}

}  // namespace kiln::composite
