// TensorImpl geometry and the hand-written tensor core (TensorBase): dims, element access, views,
// device moves.
#include "kiln/tensor_base.h"

#include "core/allocator_registry.h"
#include "core/pooled.h"
#include "kiln/autograd.h"
#include "core/element_types.h"
#include "kiln/gen/api/to.h"

namespace kiln {
namespace {

// PyTorch's rule: size-1 dims may have any stride; an empty tensor is contiguous.
bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides, int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

}  // namespace

// ---- TensorImpl ----

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides), offset_(offset), dtype_(dtype) {
  KILN_CHECK(sizes.size() == strides.size(), InternalError, "TensorImpl", "strides", "got ", strides.size(),
             " strides for ", sizes.size(), " sizes");
  numel_ = numel_of(sizes);
  contiguous_ = compute_contiguous(sizes_, strides_, numel_);
}

TensorImpl::~TensorImpl() = default;  // here, where AutogradMeta is complete

void TensorImpl::set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  KILN_CHECK(sizes.size() == strides.size(), InternalError, "set_geometry", "strides", "got ", strides.size(),
             " strides for ", sizes.size(), " sizes");
  sizes_ = DimVector(sizes);
  strides_ = DimVector(strides);
  offset_ = offset;
  numel_ = numel_of(sizes);
  contiguous_ = compute_contiguous(sizes_, strides_, numel_);
}

AutogradMeta& TensorImpl::autograd_or_create() {
  if (!autograd_) autograd_ = std::make_unique<AutogradMeta>();
  return *autograd_;
}

void TensorImpl::clear_autograd() { autograd_.reset(); }

// ---- shape helpers ----

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg) {
  // a 0-d tensor accepts dim 0 and -1, as PyTorch's wrap_scalar
  int64_t n = ndim > 0 ? ndim : 1;
  if (KILN_LIKELY(dim >= -n && dim < n)) return dim < 0 ? dim + n : dim;
  KILN_FAIL(IndexError, op, arg, "dimension out of range (expected to be in range of [", -n, ", ", n - 1,
            "], but got ", dim, ")");
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;  // size-0/1 dims keep a nonzero stride, as PyTorch
  }
  return strides;
}

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    // A view of 2^62 x 4 elements would otherwise report a wrapped (even negative) numel.
    if (KILN_UNLIKELY(__builtin_mul_overflow(n, s, &n)))
      KILN_FAIL(ValueError, "", "size", "too many elements in ", shape_str(sizes));
  return n;
}

// ---- TensorBase: geometry and element access ----

int64_t TensorBase::size(int64_t dim) const {
  KILN_CHECK(this->dim() > 0, IndexError, "size", "dim", "dimension specified as ", dim,
             " but tensor has no dimensions");
  return sizes()[size_t(wrap_dim(dim, this->dim(), "size"))];
}

int64_t TensorBase::stride(int64_t dim) const {
  KILN_CHECK(this->dim() > 0, IndexError, "stride", "dim", "dimension specified as ", dim,
             " but tensor has no dimensions");
  return strides()[size_t(wrap_dim(dim, this->dim(), "stride"))];
}

template <typename T>
T* TensorBase::data() const {
  KILN_CHECK(defined(), ValueError, "data", "self", "undefined tensor");
  KILN_CHECK(dtype() == dtype_of<T>, DTypeError, "data", "T", "data<", dtype_name(dtype_of<T>), ">() called on a ",
             dtype_name(dtype()), " tensor");
  KILN_CHECK(is_cpu(), DeviceError, "data", "self", "data<T>() needs a CPU tensor, got one on ", device().str());
  return static_cast<T*>(data_ptr());
}

Scalar TensorBase::item() const {
  KILN_CHECK(defined(), ValueError, "item", "self", "undefined tensor");
  KILN_CHECK(numel() == 1, ValueError, "item", "self", "a Tensor with ", numel(),
             " elements cannot be converted to Scalar");
  if (!is_cpu()) return to(kCPU).item();
  return visit_dtype(dtype(), [&](auto zero) -> Scalar {
    using T = decltype(zero);
    T v = *static_cast<const T*>(data_ptr());
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(int64_t(v));
    else if constexpr (is_complex_v<T>) return Scalar(v);
    else return Scalar(double(static_cast<opmath_t<T>>(v)));
  });
}

template <typename T>
std::vector<T> TensorBase::to_vector() const {
  KILN_CHECK(defined(), ValueError, "to_vector", "self", "undefined tensor");
  if (!is_cpu()) return to(kCPU).to_vector<T>();
  // copy_ casts with PyTorch's rules and walks any layout; the result reads out in row-major order.
  TensorBase dense = *this;
  if (!is_contiguous() || dtype() != dtype_of<T>) {
    dense = detail::empty_dense(sizes(), dtype_of<T>);
    dense.copy_(*this);
  }
  const T* p = static_cast<const T*>(dense.data_ptr());
  return std::vector<T>(p, p + numel());
}

// ---- TensorBase: views and device moves ----

TensorBase TensorBase::as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  return as_strided_view(sizes, strides, offset, dtype());
}

TensorBase TensorBase::as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset, DType dtype) const {
  const char* op = "as_strided_view";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(sizes.size() == strides.size(), ShapeError, op, "strides", "got ", strides.size(), " strides for ",
             sizes.size(), " sizes");
  KILN_CHECK(offset >= 0, ValueError, op, "offset", "negative storage offset ", offset);
  __int128 last = offset;  // highest element index the view touches (128 bits: no size and stride wrap it)
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK(sizes[i] >= 0, ShapeError, op, "sizes", "negative size ", sizes[i], " in ", kiln::shape_str(sizes));
    KILN_CHECK(strides[i] >= 0, ShapeError, op, "strides", "negative stride ", strides[i], " in ",
               kiln::shape_str(strides));
    if (sizes[i] == 0) empty = true;
    else last += static_cast<__int128>(sizes[i] - 1) * strides[i];
  }
  if (!empty) {
    const __int128 need = (last + 1) * static_cast<__int128>(kiln::element_size(dtype));
    KILN_CHECK(need <= static_cast<__int128>(storage()->nbytes()), ShapeError, op, "sizes", "sizes ",
               kiln::shape_str(sizes), ", strides ", kiln::shape_str(strides), " and offset ", offset,
               " reach past the storage's ", storage()->nbytes(), " bytes");
  }
  return TensorBase(detail::new_tensor_impl(storage(), dtype, sizes, strides, offset));
}

TensorBase TensorBase::to(Device device, bool non_blocking, bool copy) const {
  KILN_CHECK(defined(), ValueError, "to", "self", "undefined tensor");
  if (device == this->device() && !copy) return *this;
  detail::allocator_for_op(device, "to");  // names `to` when the device has no backend
  TensorBase out = detail::empty_dense(sizes(), dtype(), device);
  out.copy_(*this, non_blocking);
  return out;
}

TensorBase TensorBase::contiguous() const {
  KILN_CHECK(defined(), ValueError, "contiguous", "self", "undefined tensor");
  if (is_contiguous()) return *this;
  TensorBase out = detail::empty_dense(sizes(), dtype(), device());
  out.copy_(*this);
  return out;
}

size_t detail::dense_nbytes(IntArrayRef sizes, DType dtype, const char* op) {
  int64_t n = 1, bytes;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, ValueError, op, "size", "negative dimension ", s, " in ", shape_str(sizes));
    KILN_CHECK(!__builtin_mul_overflow(n, s, &n), ValueError, op, "size", "too many elements in ", shape_str(sizes));
  }
  KILN_CHECK(!__builtin_mul_overflow(n, int64_t(element_size(dtype)), &bytes), ValueError, op, "size",
             "too many bytes for ", shape_str(sizes));
  return size_t(bytes);
}

TensorBase detail::empty_dense(IntArrayRef sizes, DType dtype, Device device, const char* op) {
  const size_t nbytes = dense_nbytes(sizes, dtype, op);
  if (KILN_UNLIKELY(!device.is_cpu())) allocator_for_op(device, op);
  return TensorBase(new_tensor_impl(new_storage(nbytes, device), dtype, sizes, contiguous_strides(sizes), 0));
}

#define KILN_INSTANTIATE(T)                \
  template T* TensorBase::data<T>() const; \
  template std::vector<T> TensorBase::to_vector<T>() const;
KILN_FOR_EACH_ELEMENT_TYPE(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln
