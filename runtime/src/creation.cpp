// Tensors from C++ values: Python-number scalars and host buffers. (The factories are ops:
// runtime/src/composite/factories.cpp and the meta steps and kernels of arange, linspace, eye.)
#include <cmath>
#include <cstring>
#include "core/allocator_registry.h"
#include "kiln/common/convert.h"
#include "core/pooled.h"
#include "kiln/tensor.h"
#include "core/element_types.h"

namespace kiln {
namespace {

// Bytes of a dense tensor of `sizes`; checks sizes are non-negative and the product fits.
size_t dense_nbytes(IntArrayRef sizes, DType dtype, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, ValueError, op, "size", "negative dimension ", s, " in ", shape_str(sizes));
    KILN_CHECK(!__builtin_mul_overflow(n, s, &n), ValueError, op, "size", "too many elements in ", shape_str(sizes));
  }
  int64_t bytes;
  KILN_CHECK(!__builtin_mul_overflow(n, int64_t(element_size(dtype)), &bytes), ValueError, op, "size",
             "too many bytes for ", shape_str(sizes));
  return size_t(bytes);
}

// requires_grad is left to the caller, which sets it after filling (see with_grad).
Tensor make_tensor(size_t nbytes, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& opts) {
  return Tensor(detail::new_tensor_impl(detail::new_storage(nbytes, opts.device), opts.dtype, sizes, strides, 0));
}

// A factory's result becomes a leaf that requires grad only once its values are written.
Tensor with_grad(Tensor t, const TensorOptions& opts) {
  if (KILN_UNLIKELY(opts.requires_grad)) t.requires_grad_(true);
  return t;
}

Tensor empty_for(IntArrayRef sizes, const TensorOptions& opts, const char* op) {
  size_t nbytes = dense_nbytes(sizes, opts.dtype, op);
  if (KILN_UNLIKELY(!opts.device.is_cpu())) detail::allocator_for_op(opts.device, op);
  return make_tensor(nbytes, sizes, contiguous_strides(sizes), opts);
}

// Writes one element of a freshly made CPU tensor without the generality of fill_.
void set_first(const Tensor& t, const Scalar& s) {
  visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    *static_cast<T*>(t.data_ptr()) = s.to<T>();
  });
}

}  // namespace

// ---- Python numbers and host data ----

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t = make_tensor(element_size(s.dtype()), {}, {}, TensorOptions(s.dtype()));
  set_first(t, s);
  t.impl()->is_wrapped_number = true;
  return t;
}

TensorBase _ops::scalar_operand(const Scalar& s) { return wrapped_scalar(s); }

template <typename T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes, TensorOptions opts) {
  const char* op = "from_vector";
  int64_t n = numel_of(sizes);
  KILN_CHECK(n == int64_t(values.size()), ShapeError, op, "sizes", "shape ", shape_str(sizes), " has ", n,
             " elements but ", values.size(), " values were given");
  TensorOptions host(dtype_of<T>);
  Tensor t = empty_for(sizes, host, op);
  T* p = static_cast<T*>(t.data_ptr());
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];  // vector<bool> has no data()
  } else if (n) {
    std::memcpy(p, values.data(), values.size() * sizeof(T));
  }
  if (opts.dtype != t.dtype() || opts.device != t.device()) {
    Tensor out = empty_for(sizes, opts, op);
    out.copy_(t);
    t = out;
  }
  return with_grad(t, opts);
}

Tensor from_blob_copy(const void* data, IntArrayRef sizes, DType dtype, Device device) {
  Tensor t = empty_for(sizes, TensorOptions(dtype), "from_blob_copy");
  if (t.nbytes()) {
    KILN_CHECK(data != nullptr, ValueError, "from_blob_copy", "data", "null pointer for ", t.nbytes(), " bytes");
    std::memcpy(t.data_ptr(), data, t.nbytes());
  }
  return device.is_cpu() ? t : t.to(device);
}

#define KILN_INSTANTIATE(T) template Tensor from_vector<T>(const std::vector<T>&, IntArrayRef, TensorOptions);
KILN_FOR_EACH_ELEMENT_TYPE(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln
