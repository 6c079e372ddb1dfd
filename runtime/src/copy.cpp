// copy_ and fill_: the two in-place writes every other op builds on.
#include "kiln/device_hooks.h"
#include "kiln/destination.h"
#include "core/scalar_fits.h"
#include "kiln/tensor_base.h"

namespace kiln {
namespace {

// `src` broadcasts to `shape`; errors name copy_'s src.
void check_broadcasts(const TensorBase& src, IntArrayRef shape) {
  int64_t nd = int64_t(shape.size()), sd = src.dim();
  KILN_CHECK(sd <= nd, ShapeError, "copy_", "src", "source of shape ", shape_str(src.sizes()),
             " cannot be broadcast to destination shape ", shape_str(shape));
  for (int64_t i = 0; i < sd; ++i) {
    int64_t s = src.sizes()[size_t(sd - 1 - i)], d = shape[size_t(nd - 1 - i)];
    KILN_CHECK(s == d || s == 1, ShapeError, "copy_", "src", "source of shape ", shape_str(src.sizes()),
               " cannot be broadcast to destination shape ", shape_str(shape));
  }
}

}  // namespace

const TensorBase& TensorBase::copy_(const TensorBase& src, bool non_blocking) const {
  const char* op = "copy_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(src.defined(), ValueError, op, "src", "undefined tensor");
  if (is_same(src)) {
    bump_version();
    return *this;
  }
  check_broadcasts(src, sizes());
  support::check_no_internal_overlap(op, "self", *this);
  bump_version();
  if (numel() == 0) return *this;
  if (!is_cpu() && !src.is_cpu() && device().type != src.device().type) {
    // Between two backends (cuda and an out-of-tree one): each hook knows only its device and the CPU.
    TensorBase host = detail::empty_dense(src.sizes(), src.dtype());
    host.copy_(src, non_blocking);
    return copy_(host, non_blocking);
  }
  // The backend of the device on either side moves the bytes (the CPU's: kernels/cpu/copy.cpp).
  device_hooks(is_cpu() ? src.device().type : device().type, op).copy(*this, src, non_blocking);
  return *this;
}

const TensorBase& TensorBase::fill_(const Scalar& value) const {
  const char* op = "fill_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(detail::scalar_fits(value, dtype()), ValueError, op, "value", "value ", value.str(),
             " cannot be converted to type ", dtype_name(dtype()), " without overflow");
  support::check_no_internal_overlap(op, "self", *this);
  bump_version();
  if (numel() == 0) return *this;
  device_hooks(device().type, op).fill(*this, value);
  return *this;
}

}  // namespace kiln
