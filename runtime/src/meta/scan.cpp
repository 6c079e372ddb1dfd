// The scan family's meta step (see kiln/meta/scan.h).
#include "kiln/meta/scan.h"

namespace kiln::meta {

ScanPlan scan(const char* op, const Tensor& self, int64_t dim, std::optional<DType> dtype, bool accumulates,
              std::optional<DType> destination) {
  ScanPlan plan;
  const int64_t nd = self.dim();
  plan.dim = wrap_dim(dim, nd == 0 ? 1 : nd, op, "dim");  // a 0-d tensor takes dim 0 or -1
  if (nd == 0) plan.dim = 0;
  if (dtype) plan.dtype = *dtype;
  else if (destination && accumulates) plan.dtype = *destination;
  else if (accumulates && is_integral(self.dtype(), /*include_bool=*/true)) plan.dtype = DType::Int64;
  else plan.dtype = self.dtype();
  KILN_CHECK(plan.dtype != DType::Bool || !accumulates, DTypeError, op, "dtype",
             "a bool result is not supported; accumulate in an integer or floating dtype");
  plan.sizes = self.sizes();
  plan.split = split_at_dim(self.sizes(), plan.dim);
  return plan;
}

Tensor scan_input(const ScanPlan& plan, const Tensor& self) {
  if (self.is_contiguous() && self.dtype() == plan.dtype) return self;
  Tensor in = empty(self.sizes(), TensorOptions(plan.dtype, self.device()));
  in.copy_(self);
  return in;
}

}  // namespace kiln::meta
