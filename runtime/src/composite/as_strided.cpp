// as_strided (PyTorch 1.13's semantics and messages): a view of self's storage with the given
// sizes, strides and storage offset (self's own offset when none is given). It reads storage,
// not self's values: a non-contiguous self gives what its storage holds at those places.
#include <limits>
#include <optional>
#include <string>
#include "kiln/gen/composite.h"
#include "kiln/core.h"

namespace kiln::composite {

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  constexpr const char* op = "as_strided";
  KILN_CHECK(size.size() == stride.size(), ShapeError, op, "stride",
             "mismatch in length of strides and shape: ", size.size(), " sizes, ", stride.size(), " strides");
  for (int64_t s : size)
    KILN_CHECK(s >= 0, ShapeError, op, "size", "Trying to create tensor with negative dimension ", s, ": ",
               kiln::shape_str(size));
  for (int64_t s : stride)
    KILN_CHECK(s >= 0, ShapeError, op, "stride",
               "as_strided: Negative strides are not supported at the moment, got strides: ", kiln::shape_str(stride));
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  KILN_CHECK(offset >= 0, ValueError, op, "storage_offset", "Tensor: invalid storage offset ", offset);
  // PyTorch's bound: itemsize * (offset + 1 + sum (size - 1) * stride) bytes, none for an empty view;
  // in 128 bits, so that no size and stride can wrap around it
  __int128 last = offset;
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) empty = true;
    else last += static_cast<__int128>(size[i] - 1) * stride[i];
  }
  const __int128 need = empty ? 0 : (last + 1) * static_cast<__int128>(self.element_size());
  const size_t have = self.storage()->nbytes();
  if (need > static_cast<__int128>(have)) {
    const std::string need_text =
        need <= std::numeric_limits<int64_t>::max() ? std::to_string(int64_t(need)) : "more than 2^63";
    KILN_FAIL(ShapeError, op, "size", "setStorage: sizes ", kiln::shape_str(size), ", strides ",
              kiln::shape_str(stride), ", storage offset ", offset, ", and itemsize ", self.element_size(),
              " requiring a storage size of ", need_text, " are out of bounds for storage of size ", have);
  }
  return self.as_strided_view(size, stride, offset);
}

}  // namespace kiln::composite
