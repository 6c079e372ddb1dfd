// The along-dim family's meta step (see kiln/meta/along_dim.h).
#include "kiln/meta/along_dim.h"
#include "kiln/meta/inputs.h"
#include <string_view>

namespace kiln::meta {

DimSplit split_at_dim(IntArrayRef sizes, int64_t dim) {
  DimSplit s;
  const int64_t nd = int64_t(sizes.size());
  if (nd == 0) return s;
  s.size = sizes[size_t(dim)];
  for (int64_t i = 0; i < dim; ++i) s.outer *= sizes[size_t(i)];
  for (int64_t i = dim + 1; i < nd; ++i) s.inner *= sizes[size_t(i)];
  return s;
}

AlongDimPlan along_dim(const char* op, const TensorBase& self, int64_t dim, std::optional<DType> dtype,
                       AlongDimResult result, std::optional<DType> destination) {
  AlongDimPlan plan;
  const int64_t nd = self.dim();
  plan.dim = wrap_dim(dim, nd == 0 ? 1 : nd, op, "dim");  // a 0-d tensor takes dim 0 or -1
  if (nd == 0) plan.dim = 0;
  const bool accumulates = result == AlongDimResult::Accumulate;
  if (dtype) plan.dtype = *dtype;
  else if (destination && accumulates) plan.dtype = *destination;
  else if (accumulates && is_integral(self.dtype(), /*include_bool=*/true)) plan.dtype = DType::Int64;
  else plan.dtype = self.dtype();
  KILN_CHECK(plan.dtype != DType::Bool || !accumulates, DTypeError, op, "dtype",
             "a bool result is not supported; accumulate in an integer or floating dtype");
  KILN_CHECK(is_floating(plan.dtype) || result != AlongDimResult::Floating, DTypeError, op, "dtype",
             "expected a floating point dtype, got ", dtype_name(plan.dtype));
  plan.sizes = self.sizes();
  plan.split = split_at_dim(self.sizes(), plan.dim);
  return plan;
}

void check_companion(const AlongDimPlan& plan, const char* op, const char* arg, const TensorBase& t) {
  KILN_CHECK(t.sizes().equals(plan.sizes), ShapeError, op, arg, "expected ", arg, " of shape ", shape_str(plan.sizes),
             " (self's), got ", shape_str(t.sizes()));
  KILN_CHECK(std::string_view(arg) != "indices" || t.dtype() == DType::Int64, DTypeError, op, arg,
             "expected int64 indices, got ", dtype_name(t.dtype()));
}

TensorBase along_dim_input(const AlongDimPlan& plan, const TensorBase& self) {
  return input_as(self, plan.dtype, true);
}

}  // namespace kiln::meta
