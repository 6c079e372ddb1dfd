// matmul with NumPy semantics, composed only of differentiable kiln ops (dot, mv, mm, bmm,
// reshape, expand, unsqueeze, squeeze): matmul has no derivative formula, its parts record it.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/dot.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/mv.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/squeeze.h"
#include "kiln/gen/api/unsqueeze.h"

namespace kiln::composite {

namespace {
DimVector dims_before(IntArrayRef sizes, size_t keep_last) {
  DimVector out;
  for (size_t i = 0; i + keep_last < sizes.size(); ++i) out.push_back(sizes[i]);
  return out;
}
}  // namespace

Tensor matmul(const Tensor& self, const Tensor& other) {
  int64_t dim1 = self.dim(), dim2 = other.dim();
  KILN_CHECK(dim1 > 0 && dim2 > 0, ShapeError, "matmul", dim1 == 0 ? "self" : "other",
             "both arguments need at least 1 dim, got ", dim1, "-D and ", dim2, "-D");
  // self is (..., n, m1) or (m1); other is (..., m2, p) or (m2)
  int64_t n = dim1 > 1 ? self.sizes()[dim1 - 2] : 1;
  int64_t m1 = self.sizes().back();
  int64_t m2 = dim2 > 1 ? other.sizes()[dim2 - 2] : other.sizes()[0];
  int64_t p = dim2 > 1 ? other.sizes().back() : 1;
  KILN_CHECK(m1 == m2, ShapeError, "matmul", "other", "shapes ", self.shape_str(), " and ", other.shape_str(),
             " cannot be multiplied (", n, "x", m1, " and ", m2, "x", p, ")");

  if (dim1 == 1 && dim2 == 1) return kiln::dot(self, other);
  if (dim1 == 2 && dim2 == 1) return kiln::mv(self, other);
  if (dim1 == 1 && dim2 == 2) return kiln::squeeze(kiln::mm(kiln::unsqueeze(self, 0), other), 0);
  if (dim1 == 2 && dim2 == 2) return kiln::mm(self, other);

  if (dim1 >= 3 && dim2 <= 2) {
    // fold self's batch dims into its rows: one mm instead of a batch of small products
    DimVector out_shape = dims_before(self.sizes(), 1);
    int64_t rows = numel_of(out_shape);
    Tensor rhs = dim2 == 2 ? other : kiln::unsqueeze(other, 1);
    if (dim2 == 2) out_shape.push_back(p);
    Tensor folded = kiln::mm(kiln::reshape(self, {rows, m1}), rhs);
    return kiln::reshape(folded, out_shape);
  }

  // general case: broadcast the batch dims, flatten them, one bmm, restore the shape
  // (a 1-D operand has no batch dims: dims_before leaves nothing)
  DimVector batch1 = dims_before(self.sizes(), 2), batch2 = dims_before(other.sizes(), 2);
  DimVector batch = pointwise::broadcast_shapes(batch1, batch2, "matmul", "other");
  int64_t batch_numel = numel_of(batch);
  Tensor lhs = dim1 == 1 ? kiln::unsqueeze(self, 0) : self;    // (n=1, m1)
  Tensor rhs = dim2 == 1 ? kiln::unsqueeze(other, 1) : other;  // (m2, p=1)
  DimVector lhs_size = batch, rhs_size = batch;
  lhs_size.push_back(n);
  lhs_size.push_back(m1);
  rhs_size.push_back(m2);
  rhs_size.push_back(p);
  Tensor lhs3 = kiln::reshape(kiln::expand(lhs, lhs_size), {batch_numel, n, m1});
  Tensor rhs3 = kiln::reshape(kiln::expand(rhs, rhs_size), {batch_numel, m2, p});
  DimVector out_shape = batch;
  if (dim1 > 1) out_shape.push_back(n);
  if (dim2 > 1) out_shape.push_back(p);
  return kiln::reshape(kiln::bmm(lhs3, rhs3), out_shape);
}

}  // namespace kiln::composite
