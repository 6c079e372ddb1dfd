// The sorting family's meta steps (see kiln/meta/sorting.h).
#include "kiln/meta/sorting.h"

namespace kiln::meta {
namespace {

// The kernels carry a line's indices in 32 bits.
void check_line_length(const char* op, int64_t n) {
  KILN_CHECK(n <= int64_t(UINT32_MAX), ValueError, op, "self",
             "lines of more than 2^32 - 1 elements along the dim are not supported, got ", n);
}

// The plan's dim and [outer, size, inner]; a 0-d tensor is one line of one element.
SortPlan lines_along(const char* op, const TensorBase& self, int64_t dim) {
  SortPlan plan;
  const int64_t nd = self.dim();
  plan.dim = nd == 0 ? (wrap_dim(dim, 1, op, "dim"), 0) : wrap_dim(dim, nd, op, "dim");
  plan.split = split_at_dim(self.sizes(), plan.dim);
  plan.dtype = self.dtype();
  check_line_length(op, plan.split.size);
  return plan;
}

// self's sizes with the plan's dim set to `n`, or removed (keepdim false).
DimVector sizes_with(const TensorBase& self, int64_t dim, int64_t n, bool keep) {
  DimVector out;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != dim) out.push_back(self.size(i));
    else if (keep) out.push_back(n);
  }
  return out;
}

}  // namespace

SortPlan sort(const char* op, const TensorBase& self, int64_t dim, bool descending) {
  SortPlan plan = lines_along(op, self, dim);
  plan.sizes = self.sizes();
  plan.descending = descending;
  plan.take = plan.split.size;
  return plan;
}

SortPlan sort(const char* op, const TensorBase& self, std::optional<bool> stable, int64_t dim, bool descending) {
  KILN_CHECK(stable.has_value(), ValueError, op, "stable", "c10::optional<bool> for stable has to have value.");
  return sort(op, self, dim, descending);  // kiln's sort is always stable
}

SortPlan topk(const char* op, const TensorBase& self, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  SortPlan plan = lines_along(op, self, dim);
  KILN_CHECK(k >= 0 && k <= plan.split.size, IndexError, op, "k", "selected index k out of range (k = ", k, ", dim ",
             plan.dim, " has size ", plan.split.size, ")");
  plan.sizes = sizes_with(self, plan.dim, k, true);
  plan.descending = largest;
  // A 0-d self gives its element and index 0 for k = 0 too, as PyTorch (the result is 0-d either
  // way, and every element of a result is written).
  plan.take = self.dim() == 0 ? 1 : k;
  return plan;
}

SortPlan kthvalue(const char* op, const TensorBase& self, int64_t k, int64_t dim, bool keepdim) {
  SortPlan plan = lines_along(op, self, dim);
  KILN_CHECK(k >= 1 && k <= plan.split.size, IndexError, op, "k", "selected number k out of range for dimension ",
             plan.dim, " (k = ", k, ", size ", plan.split.size, ")");
  plan.sizes = sizes_with(self, plan.dim, 1, keepdim);
  plan.take = 1;
  plan.rank = k - 1;
  return plan;
}

SortPlan select_dim(const char* op, const TensorBase& self, int64_t dim, bool keepdim) {
  SortPlan plan = lines_along(op, self, dim);
  KILN_CHECK(plan.split.size > 0, IndexError, op, "dim", "Expected reduction dim ", plan.dim,
             " to have non-zero size.");
  plan.sizes = sizes_with(self, plan.dim, 1, keepdim);
  plan.take = 1;
  return plan;
}

SortPlan select_all(const char* op, const TensorBase& self) {
  SortPlan plan;
  plan.split.size = self.numel();
  check_line_length(op, plan.split.size);
  plan.dtype = self.dtype();
  plan.take = 1;
  return plan;  // sizes {}: a 0-d result
}

}  // namespace kiln::meta
