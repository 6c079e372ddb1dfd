// meshgrid, cartesian_prod and broadcast_tensors: every result of meshgrid and
// broadcast_tensors is an expand of its input, so they share its storage, as PyTorch documents.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/meshgrid.h"
#include "kiln/gen/api/stack.h"

namespace kiln::composite {

TensorList meshgrid_indexing(const TensorList& tensors, std::string_view indexing) {
  KILN_CHECK(!tensors.empty(), ValueError, "meshgrid", "tensors", "meshgrid expects a non-empty TensorList");
  for (const Tensor& t : tensors) {
    KILN_CHECK(t.dim() <= 1, ShapeError, "meshgrid", "tensors",
               "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", shape_str(t.sizes()));
    KILN_CHECK(t.dtype() == tensors[0].dtype(), DTypeError, "meshgrid", "tensors",
               "meshgrid expects all tensors to have the same dtype");
    KILN_CHECK(t.device() == tensors[0].device(), DeviceError, "meshgrid", "tensors",
               "meshgrid expects all tensors to have the same device");
  }
  KILN_CHECK(indexing == "ij" || indexing == "xy", ValueError, "meshgrid", "indexing",
             "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", std::string(indexing));
  const size_t n = tensors.size();
  // xy: the first two inputs trade places in the grid's dims (NumPy's Cartesian indexing)
  const bool swap = indexing == "xy" && n >= 2;
  auto place = [&](size_t i) { return swap && i < 2 ? 1 - i : i; };
  std::vector<int64_t> grid(n);
  for (size_t i = 0; i < n; ++i) grid[place(i)] = tensors[i].numel();
  TensorList out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int64_t> shape(n, 1);
    shape[place(i)] = -1;
    out.push_back(tensors[i].view(shape).expand(grid));
  }
  return out;
}

TensorList meshgrid(const TensorList& tensors) { return meshgrid_indexing(tensors, "ij"); }

Tensor cartesian_prod(const TensorList& tensors) {
  for (const Tensor& t : tensors)
    KILN_CHECK(t.dim() == 1, ShapeError, "cartesian_prod", "tensors", "Expect a 1D vector, but got shape ",
               shape_str(t.sizes()));
  if (tensors.size() == 1) return tensors[0];
  TensorList columns = kiln::meshgrid(tensors, "ij");
  for (Tensor& c : columns) c = c.flatten();
  return kiln::stack(columns, 1);
}

TensorList broadcast_tensors(const TensorList& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) {
    const IntArrayRef s = t.sizes();
    // PyTorch's infer_size message: "tensor a" is the shape so far, "tensor b" this one
    const size_t n = std::max(shape.size(), s.size());
    DimVector merged(n, 1);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = i < n - shape.size() ? 1 : shape[i - (n - shape.size())];
      const int64_t b = i < n - s.size() ? 1 : s[i - (n - s.size())];
      KILN_CHECK(a == b || a == 1 || b == 1, ShapeError, "broadcast_tensors", "tensors", "The size of tensor a (", a,
                 ") must match the size of tensor b (", b, ") at non-singleton dimension ", i);
      merged[i] = a == 1 ? b : a;
    }
    shape = merged;
  }
  TensorList out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}

}  // namespace kiln::composite
