// Diagonal builders and readers: diag, diag_embed, diagflat, trace, block_diag. diag_embed is
// diagonal's gradient (zeros with the input on a diagonal), so its autograd is diagonal's;
// block_diag pads each block with zeros and cats, so every block gets its gradient.
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/diag.h"
#include "kiln/gen/api/diag_embed.h"
#include "kiln/gen/api/diagonal_backward.h"
#include "kiln/gen/api/sum.h"

namespace kiln::composite {

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t n = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, n, "diag_embed", "dim1"), d2 = wrap_dim(dim2, n, "diag_embed", "dim2");
  KILN_CHECK(d1 != d2, ValueError, "diag_embed", "dim2", "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t side = self.size(-1) + (offset < 0 ? -offset : offset);
  // self's leading dims fill the result's other dims in order; its last runs along the diagonal
  DimVector sizes;
  for (int64_t i = 0, j = 0; i < n; ++i) sizes.push_back(i == d1 || i == d2 ? side : self.size(j++));
  return kiln::diagonal_backward(self, sizes, offset, d1, d2);
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, ShapeError, "diag", "self", "matrix or a vector expected");
  if (self.dim() == 1) return kiln::diag_embed(self, diagonal, 0, 1);
  return self.diagonal(diagonal, 0, 1).clone();  // PyTorch's diag copies
}

Tensor diagflat(const Tensor& self, int64_t offset) { return kiln::diag(self.reshape({-1}), offset); }

Tensor trace(const Tensor& self) {
  KILN_CHECK(self.dim() == 2, ShapeError, "trace", "self", "trace: expected a matrix, but got tensor with dim ",
             self.dim());
  return kiln::sum(self.diagonal(0, 0, 1));
}

Tensor block_diag(const TensorList& tensors) {
  if (tensors.empty()) return kiln::empty({1, 0});  // PyTorch's result for no blocks
  std::vector<Tensor> blocks;
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    KILN_CHECK(t.dim() <= 2, ShapeError, "block_diag", "tensors",
               "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i, " has ", t.dim(),
               " dimensions");
    KILN_CHECK(t.device() == tensors[0].device(), DeviceError, "block_diag", "tensors",
               "torch.block_diag: input tensors must all be on the same device. Input 0 is on device ",
               tensors[0].device().str(), " and input ", i, " is on device ", t.device().str());
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.numel()}));  // 0-d and 1-d tensors are one row
    cols += blocks.back().size(1);
  }
  std::vector<const TensorBase*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  const DType dtype = pointwise::result_type(inputs.data(), int(inputs.size()));
  TensorList rows;
  int64_t before = 0;
  for (const Tensor& b : blocks) {
    const int64_t r = b.size(0), c = b.size(1);
    const TensorOptions opts(dtype, b.device());
    rows.push_back(
        kiln::cat({kiln::zeros({r, before}, opts), b.to(dtype), kiln::zeros({r, cols - before - c}, opts)}, 1));
    before += c;
  }
  return kiln::cat(rows, 0);
}

}  // namespace kiln::composite
