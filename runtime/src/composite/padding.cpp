// Padding (ops/pooling.yaml): constant_pad_nd narrows for negative pads and concatenates blocks
// of the value for positive ones; pad's reflect, replicate and circular modes pick each padded
// dim's source positions with index_select. Both are built on differentiable ops, so autograd and
// every device come with them.
#include <algorithm>
#include <string>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/constant_pad_nd.h"
#include "kiln/gen/api/index_select.h"

namespace kiln::composite {
namespace {

enum class PadMode { Reflect, Replicate, Circular };

// The source position of padded position i (from -before to size + after) of a dim of `size`.
int64_t source_of(PadMode mode, int64_t i, int64_t size) {
  switch (mode) {
    case PadMode::Reflect:
      return i < 0 ? -i : (i >= size ? 2 * (size - 1) - i : i);
    case PadMode::Replicate:
      return i < 0 ? 0 : (i >= size ? size - 1 : i);
    case PadMode::Circular:
      return ((i % size) + size) % size;
  }
  return i;
}

const char* mode_name(PadMode mode) {
  return mode == PadMode::Reflect ? "reflect" : mode == PadMode::Replicate ? "replicate" : "circular";
}

}  // namespace

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  const char* op = "constant_pad_nd";
  KILN_CHECK(pad.size() % 2 == 0, ValueError, op, "pad", "Length of pad must be even but instead it equals ",
             pad.size());
  const int64_t dims = int64_t(pad.size()) / 2;
  KILN_CHECK(dims <= self.dim(), ValueError, op, "pad",
             "Length of pad should be no more than twice the number of dimensions of the input. Pad length is ",
             pad.size(), " while the input has ", self.dim(), " dimensions.");
  Tensor out = self;
  bool copied = false;  // by cat; else the narrowed input is copied at the end, as PyTorch returns a new tensor
  for (int64_t k = 0; k < dims; ++k) {  // pad[2k], pad[2k + 1]: before and after dim -(k + 1)
    const int64_t d = self.dim() - 1 - k, before = pad[size_t(2 * k)], after = pad[size_t(2 * k + 1)];
    const int64_t n = self.size(d);
    KILN_CHECK(n + before + after >= 0, ValueError, op, "pad", "The input size ", n, ", plus negative padding ", before,
               " and ", after, " resulted in a negative output size, which is invalid. Check dimension ", d,
               " of your input.");
    if (before < 0) out = out.narrow(d, -before, out.size(d) + before);
    if (after < 0) out = out.narrow(d, 0, out.size(d) + after);
    if (before <= 0 && after <= 0) continue;
    std::vector<Tensor> parts;
    const TensorOptions opts(self.dtype(), self.device());
    DimVector sizes = out.sizes();
    if (before > 0) {
      sizes[size_t(d)] = before;
      parts.push_back(kiln::full(sizes, value, opts));
    }
    parts.push_back(out);
    if (after > 0) {
      sizes[size_t(d)] = after;
      parts.push_back(kiln::full(sizes, value, opts));
    }
    out = kiln::cat(parts, d);
    copied = true;
  }
  return copied ? out : out.clone();
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode_str, std::optional<double> value) {
  const char* op = "pad";
  PadMode mode;
  if (mode_str == "constant") {
    KILN_CHECK(int64_t(pad.size()) <= 2 * self.dim(), ValueError, op, "pad", "Padding length too large");
    return kiln::constant_pad_nd(self, pad, value.value_or(0.0));
  } else if (mode_str == "reflect") {
    mode = PadMode::Reflect;
  } else if (mode_str == "replicate") {
    mode = PadMode::Replicate;
  } else if (mode_str == "circular") {
    mode = PadMode::Circular;
  } else {
    KILN_FAIL(NotImplementedError, op, "mode", "Unrecognised padding mode ", mode_str);
  }
  KILN_CHECK(!value || *value == 0, ValueError, op, "value", "Padding mode \"", mode_name(mode),
             "\" doesn't take in value argument");
  const int64_t dims = int64_t(pad.size()) / 2;
  KILN_CHECK(pad.size() % 2 == 0 && dims >= 1 && dims <= 3 && (self.dim() == dims + 1 || self.dim() == dims + 2),
             NotImplementedError, op, "pad",
             "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  // the padded dims (and channels, when there is a batch dim) must be non-empty, as PyTorch's
  for (int64_t d = self.dim() == dims + 2 ? 1 : 0; d < self.dim(); ++d)
    KILN_CHECK(self.size(d) > 0, ShapeError, op, "self", "Expected ", dims + 1, "D or ", dims + 2,
               "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
               shape_str(self.sizes()));
  Tensor out = self;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = self.dim() - 1 - k, before = pad[size_t(2 * k)], after = pad[size_t(2 * k + 1)];
    const int64_t n = self.size(d);
    if (mode == PadMode::Reflect)
      KILN_CHECK(before < n && after < n, ValueError, op, "pad",
                 "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (",
                 before, ", ", after, ") at dimension ", d, " of input ", shape_str(self.sizes()));
    KILN_CHECK(n + before + after >= 0, ValueError, op, "pad", "input (", shape_str(self.sizes()), ") with padding (",
               before, ", ", after, ") at dimension ", d, " gives a negative output size");
    std::vector<int64_t> index;
    index.reserve(size_t(n + before + after));
    if (mode == PadMode::Circular) {
      // PyTorch crops the negative pads first and wraps around what is left
      const int64_t first = std::max<int64_t>(0, -before), kept = n - first - std::max<int64_t>(0, -after);
      const int64_t lead = std::max<int64_t>(0, before), trail = std::max<int64_t>(0, after);
      KILN_CHECK(lead <= kept && trail <= kept, ValueError, op, "pad",
                 "Padding value causes wrapping around more than once.");
      for (int64_t i = -lead; i < kept + trail; ++i) index.push_back(first + source_of(mode, i, kept));
    } else {
      for (int64_t i = -before; i < n + after; ++i) index.push_back(source_of(mode, i, n));
    }
    const Tensor idx = from_vector(index, {int64_t(index.size())}).to(self.device());
    out = kiln::index_select(out, d, idx);
  }
  return out;
}

}  // namespace kiln::composite
