// Meta steps of flip, tril/triu and tril_indices/triu_indices (see kiln/meta/shape_build.h).
#include "kiln/meta/shape_build.h"
#include <cstring>
#include "kiln/common/tri_indices.h"
#include <limits>

namespace kiln::meta {

FlipPlan flip(const char* op, const TensorBase& self, IntArrayRef dims) {
  const int64_t n = self.dim();
  std::vector<bool> flipped(size_t(n), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, n, op, "dims");
    KILN_CHECK(n == 0 || !flipped[size_t(w)], ValueError, op, "dims", "dim ", w,
               " appears multiple times in the list of dims");
    if (n > 0) flipped[size_t(w)] = true;
  }
  FlipPlan plan;
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  // size-1 dims flip to themselves; neighbours of one kind merge into one dim (two reversed
  // dims reverse as one: (i, j) -> (I-1-i, J-1-j) is k -> I*J-1-k)
  for (int64_t d = 0; d < n; ++d) {
    const int64_t s = self.size(d);
    if (s == 1) continue;
    const bool f = flipped[size_t(d)];
    if (!plan.shape.empty() && plan.flipped.back() == f) {
      plan.shape.back() *= s;
    } else {
      plan.shape.push_back(s);
      plan.flipped.push_back(f);
    }
  }
  return plan;
}

TrianglePlan triangle(const char* op, const TensorBase& self, int64_t /*diagonal: any offset is legal*/) {
  const int64_t n = self.dim();
  // PyTorch wraps dim -2 here, so a 1-d tensor gets its "Dimension out of range" IndexError
  wrap_dim(-2, n, op, "self");
  TrianglePlan plan;
  plan.sizes = self.sizes();
  plan.dtype = self.dtype();
  plan.rows = self.size(n - 2);
  plan.cols = self.size(n - 1);
  for (int64_t d = 0; d < n - 2; ++d) plan.batch *= self.size(d);
  return plan;
}

TriIndicesPlan tri_indices(const char* op, int64_t row, int64_t col, int64_t offset, const TensorOptions& options) {
  KILN_CHECK(row >= 0, ValueError, op, "row", "row must be non-negative, got", row);
  KILN_CHECK(col >= 0, ValueError, op, "col", "col must be non-negative, got", col);
  TriIndicesPlan plan;
  plan.dtype = options.dtype_given ? options.dtype : DType::Int64;
  // PyTorch's kernels take the index types only
  KILN_CHECK(plan.dtype == DType::Int64 || plan.dtype == DType::Int32, DTypeError, op, "dtype", "\"", op,
             "\" not implemented for '", dtype_name(plan.dtype), "'");
  KILN_CHECK(col == 0 || row <= std::numeric_limits<int64_t>::max() / col, ValueError, op, "row", "row * col = ", row,
             " * ", col, " overflows int64");
  plan.row = row;
  plan.col = col;
  const bool lower = std::strcmp(op, "tril_indices") == 0;
  // An offset past either corner selects what the corner does (every entry, or none), so it is
  // clamped there and the row arithmetic cannot overflow (tril keeps everything from col - 1 on,
  // triu nothing from col on; both take -row as they take anything below it).
  plan.offset = tri::clamp(offset, -row, lower ? col - 1 : col);
  const int64_t count = lower ? tri::tril_row_start(row, col, plan.offset) : tri::triu_row_start(row, col, plan.offset);
  plan.sizes = {2, count};
  return plan;
}

}  // namespace kiln::meta
