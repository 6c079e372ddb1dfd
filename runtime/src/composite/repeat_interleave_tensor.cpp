// repeat_interleave with tensor repeats (PyTorch 1.13's semantics and messages): the indices
// form (repeat_interleave.Tensor) reads the total and whether any repeat is negative to the host
// in one transfer, then marks where each index's run ends and takes a running count; the self
// form selects with those indices, so its gradient is index_select's (an index_add).
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/index_add.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/lt.h"
#include "kiln/gen/api/repeat_interleave.h"
#include "kiln/gen/api/stack.h"

namespace kiln::composite {

Tensor repeat_interleave_indices(const Tensor& repeats, std::optional<int64_t> output_size) {
  KILN_CHECK(repeats.dim() == 1, ShapeError, "repeat_interleave", "repeats",
             "repeat_interleave only accept 1D vector as repeat");
  KILN_CHECK(repeats.dtype() == DType::Int64 || repeats.dtype() == DType::Int32, DTypeError, "repeat_interleave",
             "repeats", "repeats has to be Long or Int tensor");
  const int64_t n = repeats.size(0);
  if (n == 0) return kiln::empty({0}, repeats.options());
  const TensorOptions longs(DType::Int64, repeats.device());
  const Tensor ends = kiln::cumsum(repeats, 0, DType::Int64);
  // one read to the host: the total and whether a repeat is negative
  const Tensor facts =
      kiln::stack({ends.select(0, n - 1), kiln::any(kiln::lt(repeats, 0)).to(DType::Int64)}, 0).to(kCPU);
  const int64_t total = facts.select(0, 0).item<int64_t>();
  KILN_CHECK(facts.select(0, 1).item<int64_t>() == 0, ValueError, "repeat_interleave", "repeats",
             "repeats can not be negative");
  KILN_CHECK(!output_size || *output_size == total, ValueError, "repeat_interleave", "output_size",
             "allocated size does not match required size");
  // position j belongs to the index whose run ends after j: count the run ends at or before j
  const Tensor marks = kiln::index_add(kiln::zeros({total + 1}, longs), 0, ends, kiln::ones_like(ends));
  return kiln::cumsum(marks.narrow(0, 0, total), 0, repeats.dtype());
}

Tensor repeat_interleave_tensor(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                std::optional<int64_t> output_size) {
  KILN_CHECK(!dim || self.dim() > 0, IndexError, "repeat_interleave", "dim", "Dimension specified as ", *dim,
             " but tensor has no dimensions");
  KILN_CHECK(repeats.device() == self.device(), DeviceError, "repeat_interleave", "repeats",
             "repeats must be on the same device as self");
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, self.dim(), "repeat_interleave") : 0;
  Tensor per_index = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) {
    per_index = repeats.reshape({1}).expand({input.size(d)});
  } else {
    KILN_CHECK(repeats.dim() == 1, ShapeError, "repeat_interleave", "repeats", "repeats must be 0-dim or 1-dim tensor");
    KILN_CHECK(repeats.size(0) == input.size(d), ShapeError, "repeat_interleave", "repeats",
               "repeats must have the same size as input along dim");
  }
  return kiln::index_select(input, d, kiln::repeat_interleave(per_index, output_size));
}

}  // namespace kiln::composite
