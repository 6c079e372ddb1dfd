// The mask ops' meta steps (see kiln/meta/masking.h).
#include "kiln/meta/masking.h"
#include "kiln/error.h"
#include "kiln/pointwise.h"

namespace kiln::meta {
namespace {

void check_count(const char* op, int64_t count, int64_t numel) {
  KILN_CHECK(count >= 0 && count <= numel, ValueError, op, "count", "expected a count in [0, ", numel, "], got ",
             count);
}

// Element strides of `t` seen with `sizes` (t's dims aligned to the right, 0 where it broadcasts).
DimVector broadcast_strides(const TensorBase& t, IntArrayRef sizes) {
  DimVector own = contiguous_strides(t.sizes()), out(sizes.size(), 0);
  const int64_t shift = int64_t(sizes.size()) - t.dim();
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) != 1) out[size_t(d + shift)] = own[size_t(d)];
  return out;
}

}  // namespace

void check_bool_mask(const char* op, const TensorBase& mask) {
  // uint8 masks are PyTorch's deprecated spelling; they still work there, so they work here
  KILN_CHECK(mask.dtype() == DType::Bool || mask.dtype() == DType::UInt8, DTypeError, op, "mask",
             "expected a bool (or uint8) mask, got ", dtype_name(mask.dtype()));
}

MaskPlan nonzero_sized(const char* op, const TensorBase& self, int64_t count) {
  check_count(op, count, self.numel());
  MaskPlan plan;
  plan.sizes = {count, self.dim()};
  plan.dtype = DType::Int64;
  plan.count = count;
  return plan;
}

MaskPlan masked_select_sized(const char* op, const TensorBase& self, const TensorBase& mask, int64_t count) {
  check_bool_mask(op, mask);
  KILN_CHECK(mask.sizes().equals(self.sizes()), ShapeError, op, "mask", "expected mask of self's shape ",
             shape_str(self.sizes()), ", got ", shape_str(mask.sizes()), " (masked_select broadcasts them first)");
  check_count(op, count, self.numel());
  MaskPlan plan;
  plan.sizes = {count};
  plan.dtype = self.dtype();
  plan.count = count;
  return plan;
}

MaskPlan masked_scatter(const char* op, const TensorBase& self, const TensorBase& mask, const TensorBase& source) {
  check_bool_mask(op, mask);
  KILN_CHECK(source.dtype() == self.dtype(), DTypeError, op, "source", "expected source of self's dtype ",
             dtype_name(self.dtype()), ", got ", dtype_name(source.dtype()));
  MaskPlan plan;
  plan.sizes = pointwise::broadcast_shapes(self.sizes(), mask.sizes(), op, "mask");
  plan.dtype = self.dtype();
  plan.dense = self.sizes().equals(plan.sizes) && mask.sizes().equals(plan.sizes);
  if (!plan.dense) {
    plan.self_strides = broadcast_strides(self, plan.sizes);
    plan.mask_strides = broadcast_strides(mask, plan.sizes);
  }
  return plan;
}

}  // namespace kiln::meta
