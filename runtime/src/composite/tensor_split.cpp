// tensor_split (sections, indices, and a tensor holding either): NumPy's array_split as views
// of self along dim, as PyTorch 1.13.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/tensor_split.h"
#include "list_limits.h"

namespace kiln::composite {
namespace {
void check_dims(const Tensor& self) {
  KILN_CHECK(self.dim() > 0, ShapeError, "tensor_split", "self",
             "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ", self.dim(), " dims");
}
}  // namespace

TensorList tensor_split_sections(const Tensor& self, int64_t sections, int64_t dim) {
  check_dims(self);
  KILN_CHECK(sections > 0, ValueError, "tensor_split", "sections", "number of sections must be larger than 0, got ",
             sections);
  check_list_length("tensor_split", "sections", sections);  // the fuzzer's 2^62
  const int64_t d = wrap_dim(dim, self.dim(), "tensor_split");
  const int64_t size = self.size(d), base = size / sections, extra = size % sections;
  TensorList parts;
  parts.reserve(size_t(sections));
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {  // the first size % sections parts get one more
    const int64_t len = base + (i < extra ? 1 : 0);
    parts.push_back(self.slice(d, start, start + len));
    start += len;
  }
  return parts;
}

TensorList tensor_split_indices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  check_dims(self);
  const int64_t d = wrap_dim(dim, self.dim(), "tensor_split");
  TensorList parts;
  parts.reserve(indices.size() + 1);
  int64_t start = 0;
  for (int64_t index : indices) {  // Python slices: negative indices count from the end, bounds clamp
    parts.push_back(self.slice(d, start, index));
    start = index;
  }
  parts.push_back(self.slice(d, start, self.size(d)));
  return parts;
}

TensorList tensor_split_tensor(const Tensor& self, const Tensor& tensor_indices_or_sections, int64_t dim) {
  const Tensor& t = tensor_indices_or_sections;
  KILN_CHECK(t.device().type == DeviceType::CPU, DeviceError, "tensor_split", "tensor_indices_or_sections",
             "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on ", t.device().str());
  KILN_CHECK(t.dtype() == DType::Int64, DTypeError, "tensor_split", "tensor_indices_or_sections",
             "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ", dtype_name(t.dtype()));
  KILN_CHECK(t.dim() <= 1, ShapeError, "tensor_split", "tensor_indices_or_sections",
             "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but "
             "got a tensor with ",
             t.dim(), " dims");
  if (t.dim() == 0) return kiln::tensor_split(self, t.item<int64_t>(), dim);
  const Tensor c = t.contiguous();
  const int64_t* p = c.data<int64_t>();
  return kiln::tensor_split(self, IntArrayRef(p, size_t(c.numel())), dim);
}

}  // namespace kiln::composite
