// out= and in-place destinations (kiln/destination.h): pointwise ops and structured kernel ops.
// The op has decided the result's shape and dtype; these decide where its kernel writes.
#include "kiln/destination.h"

namespace kiln::support {

void resize_out(TensorBase& out, IntArrayRef shape) {
  DimVector strides = contiguous_strides(shape);
  size_t es = out.element_size();
  size_t needed = size_t(numel_of(shape) + out.storage_offset()) * es;
  if (needed <= out.storage()->nbytes()) {
    out.impl()->set_geometry(shape, strides, out.storage_offset());
  } else {
    out.impl()->set_storage(make_ref<StorageImpl>(size_t(numel_of(shape)) * es, out.device()));
    out.impl()->set_geometry(shape, strides, 0);
  }
}

void check_destination(const char* op, const char* arg, const TensorBase& dst, DType dtype, Device device) {
  KILN_CHECK(dst.defined(), ValueError, op, arg, "expected a tensor, got an undefined one");
  KILN_CHECK(dst.device() == device, DeviceError, op, arg, "expected a tensor on ", device.str(),
             " (where the inputs are), got one on ", dst.device().str());
  KILN_CHECK(can_cast(dtype, dst.dtype()), DTypeError, op, arg, "result type ", dtype_name(dtype),
             " can't be cast to the desired output type ", dtype_name(dst.dtype()));
}

void check_no_internal_overlap(const char* op, const char* arg, const TensorBase& dst) {
  for (int64_t d = 0; d < dst.dim(); ++d)
    KILN_CHECK(dst.stride(d) != 0 || dst.size(d) <= 1, ValueError, op, arg,
               "unsupported operation: more than one element of the written-to tensor refers to a single memory "
               "location; clone() the tensor first");
}

TensorBase prepare_destination(const char* op, const char* arg, TensorBase& dst, IntArrayRef sizes, DType dtype,
                               Device device, bool resize, std::initializer_list<const TensorBase*> inputs) {
  check_destination(op, arg, dst, dtype, device);
  if (!dst.sizes().equals(sizes)) {
    KILN_CHECK(resize, ShapeError, op, arg, "output with shape ", shape_str(dst.sizes()),
               " doesn't match the result shape ", shape_str(sizes));
    resize_out(dst, sizes);
  }
  check_no_internal_overlap(op, arg, dst);
  bool direct = dst.dtype() == dtype && dst.is_contiguous();
  for (const TensorBase* in : inputs)
    if (in->defined() && in->numel() > 0 && in->storage().get() == dst.storage().get()) direct = false;
  return direct ? dst : detail::empty_dense(sizes, dtype, device, op);
}

void finish_destination(const TensorBase& written, TensorBase& dst) {
  if (!written.is_same(dst)) dst.copy_(written);
  dst.bump_version();
}

}  // namespace kiln::support
