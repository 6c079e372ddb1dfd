#ifndef KILN_RUNTIME_INCLUDE_KILN_TENSOR_BASE_H_
#define KILN_RUNTIME_INCLUDE_KILN_TENSOR_BASE_H_
// TensorImpl, TensorOptions and TensorBase: the hand-written tensor core, without op methods.
// Kernels and the kernel-facing API (kiln/meta, kiln/cpu, kiln/cuda, PointwiseCall) see only
// this header, so adding an op or changing a signature never recompiles them; kiln/tensor.h
// derives Tensor from TensorBase and adds the generated op methods.
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>
#include "kiln/array_ref.h"
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/intrusive_ptr.h"
#include "kiln/layout.h"
#include "kiln/scalar.h"
#include "kiln/storage.h"

namespace kiln {

class Tensor;
class Generator;  // kiln/random.h
class Node;
using NodeRef = Ref<Node>;
struct AutogradMeta;
struct ViewInfo;  // kiln/autograd/graph.h
using TensorList = std::vector<Tensor>;

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
  ~TensorImpl() override;

  const Storage& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  bool is_contiguous() const { return contiguous_; }
  Layout layout() const { return Layout::Strided; }  // sparse tensors are not built yet
  void* data() const { return static_cast<char*>(storage_->data()) + offset_ * int64_t(element_size(dtype_)); }
  // Re-describe this impl in place (used by in-place resize of out= arguments and set_).
  void set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t offset);
  void set_storage(Storage s) { storage_ = std::move(s); }

  // Autograd state; null for plain tensors so the hot path pays nothing.
  AutogradMeta* autograd() const { return autograd_.get(); }
  AutogradMeta& autograd_or_create();
  void clear_autograd();

  // A Python-number-like 0-d tensor: takes part in type promotion as a scalar would.
  bool is_wrapped_number = false;
  // Created by a view op (shares another tensor's storage).
  bool is_view = false;
  // A view's root base and how to make the view from it again (kiln/autograd/graph.h), for
  // in-place ops on views under autograd; null for tensors that are not views.
  std::shared_ptr<ViewInfo> view_info;

 private:
  Storage storage_;
  DimVector sizes_, strides_;
  int64_t offset_ = 0, numel_ = 0;
  DType dtype_;
  bool contiguous_ = true;
  std::unique_ptr<AutogradMeta> autograd_;
};

// What a factory makes: dtype, device, layout and whether the result requires grad, as
// PyTorch's keyword arguments. A factory fills what the caller did not give (`dtype_given`,
// `device_given`) from its own rule: full infers the dtype from the value, *_like copies self's.
struct TensorOptions {
  DType dtype = DType::Float32;
  Device device = kCPU;
  Layout layout = Layout::Strided;
  bool requires_grad = false;
  bool dtype_given = false;
  bool device_given = false;
  TensorOptions() : dtype(default_float_dtype()) {}
  TensorOptions(DType d) : dtype(d), dtype_given(true) {}
  TensorOptions(Device dev) : dtype(default_float_dtype()), device(dev), device_given(true) {}
  TensorOptions(DType d, Device dev) : dtype(d), device(dev), dtype_given(true), device_given(true) {}
  TensorOptions(Layout l) : dtype(default_float_dtype()), layout(l) {}
  TensorOptions with_dtype(DType d) const {
    auto o = *this;
    o.dtype = d;
    o.dtype_given = true;
    return o;
  }
  TensorOptions with_device(Device d) const {
    auto o = *this;
    o.device = d;
    o.device_given = true;
    return o;
  }
  TensorOptions with_layout(Layout l) const {
    auto o = *this;
    o.layout = l;
    return o;
  }
  TensorOptions with_requires_grad(bool r = true) const {
    auto o = *this;
    o.requires_grad = r;
    return o;
  }
};

// A refcounted handle to a TensorImpl: geometry, element access, copies and metadata views.
// No op methods and no autograd (kiln/tensor.h's Tensor has those); a TensorBase converts to
// a Tensor of the same handle, implicitly.
class TensorBase {
 public:
  TensorBase() = default;
  explicit TensorBase(Ref<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const Ref<TensorImpl>& impl_ref() const { return impl_; }
  bool is_same(const TensorBase& o) const { return impl_ == o.impl_; }

  // Geometry.
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  IntArrayRef shape() const { return impl_->sizes(); }
  int64_t size(int64_t dim) const;  // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return int64_t(impl_->sizes().size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  DType dtype() const { return impl_->dtype(); }
  DType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  Layout layout() const { return impl_->layout(); }
  TensorOptions options() const { return TensorOptions(dtype(), device()); }
  int64_t storage_offset() const { return impl_->offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  size_t element_size() const { return kiln::element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  bool is_floating_point() const { return is_floating(dtype()); }
  bool is_complex() const { return kiln::is_complex(dtype()); }

  // Data access (CPU tensors only for data<T>/item/to_vector).
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data() const;      // checks dtype and device
  Scalar item() const;  // one-element tensor -> Scalar
  template <typename T>
  T item() const {
    return item().to<T>();
  }
  template <typename T>
  std::vector<T> to_vector() const;  // converts to T, any layout/device
  const Storage& storage() const { return impl_->storage(); }
  uint32_t version() const { return storage()->version(); }
  void bump_version() const { storage()->bump_version(); }

  // Hand-written, non-differentiable core.
  const TensorBase& copy_(const TensorBase& src, bool non_blocking = false) const;  // broadcasts and casts src
  const TensorBase& fill_(const Scalar& value) const;
  const TensorBase& zero_() const { return fill_(0); }
  TensorBase to(Device device, bool non_blocking = false, bool copy = false) const;
  // Self when contiguous, else a dense copy (no autograd: Tensor::contiguous is the op).
  TensorBase contiguous() const;
  // Metadata-only view over the same storage (no autograd; ops use it to build views).
  TensorBase as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const;
  // The same bytes seen as another dtype (view_as_real, view_as_complex): sizes, strides and
  // offset count elements of `dtype`.
  TensorBase as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset, DType dtype) const;

  std::string str() const;        // PyTorch-like printing
  std::string shape_str() const;  // "[2, 3]"

 protected:
  Ref<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const TensorBase& t);
std::string shape_str(IntArrayRef sizes);

// ---- Shape helpers shared by stubs and kernels ----
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg = "dim");  // -1 -> ndim-1
DimVector contiguous_strides(IntArrayRef sizes);
int64_t numel_of(IntArrayRef sizes);

namespace _ops {
// A Python-number-like 0-d tensor holding `s` (kiln::wrapped_scalar over TensorBase): the
// scalar operand of the kiln::_ops entries (kiln/gen/ops/<name>.h) and their operators.
TensorBase scalar_operand(const Scalar& s);
}  // namespace _ops

namespace detail {
// Bytes of a dense tensor of `sizes`: ValueError naming `op` and its `size` argument for a
// negative size or an element or byte count that does not fit.
size_t dense_nbytes(IntArrayRef sizes, DType dtype, const char* op);
// A new dense (contiguous) tensor on `device`, values unspecified: the one allocation the
// factories, the runtime and the kernels use for results and scratch buffers (the `empty` op
// adds the factory keywords on top). Errors name `op`.
TensorBase empty_dense(IntArrayRef sizes, DType dtype, Device device = kCPU, const char* op = "empty");
inline TensorBase empty_dense(IntArrayRef sizes, const TensorOptions& options, const char* op = "empty") {
  return empty_dense(sizes, options.dtype, options.device, op);
}
}  // namespace detail

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_TENSOR_BASE_H_
