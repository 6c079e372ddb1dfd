#ifndef KILN_RUNTIME_INCLUDE_KILN_TENSOR_H_
#define KILN_RUNTIME_INCLUDE_KILN_TENSOR_H_
// Tensor: TensorBase (kiln/tensor_base.h) plus autograd and one method per op with a method
// variant, generated from ops/*.yaml into kiln/gen/tensor_methods.h. Adding such an op changes
// this class, so code that needs no op method (kernels, the kernel-facing API) includes
// kiln/tensor_base.h instead.
#include <functional>
#include <tuple>
#include <type_traits>
#include "kiln/autograd/removable_handle.h"
#include "kiln/tensor_base.h"

namespace kiln {

namespace indexing {
class TensorIndex;  // kiln/indexing.h
}

class Tensor : public TensorBase {
 public:
  Tensor() = default;
  explicit Tensor(Ref<TensorImpl> impl) : TensorBase(std::move(impl)) {}
  // The same handle: what kernels and the kernel-facing API return is a Tensor to callers.
  Tensor(const TensorBase& base) : TensorBase(base) {}
  Tensor(TensorBase&& base) : TensorBase(std::move(base)) {}

  // The core's in-place writes, recorded by autograd (runtime/src/autograd/copy_autograd.cpp):
  // the overwritten values get no gradient, copy_'s source gets the gradient; on a view they
  // rebase the base's history, so x.select(0, i).copy_(v) is PyTorch's x[i] = v.
  Tensor& copy_(const TensorBase& src, bool non_blocking = false);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_() { return fill_(0); }
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const {
    return TensorBase::to(device, non_blocking, copy);
  }
  Tensor cpu() const { return to(kCPU); }
  Tensor cuda() const { return to(Device(DeviceType::CUDA, 0)); }
  Tensor as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
    return TensorBase::as_strided_view(sizes, strides, offset);
  }
  Tensor as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset, DType dtype) const {
    return TensorBase::as_strided_view(sizes, strides, offset, dtype);
  }

  // Autograd.
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  Tensor grad() const;                 // undefined tensor when no gradient yet
  Tensor& mutable_grad();              // reference to the stored gradient slot
  void set_grad(const Tensor& g);
  const NodeRef& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  void retain_grad() const;
  // With `inputs`, only those tensors' .grad accumulate (autograd::backward).
  void backward(const Tensor& gradient = Tensor(), bool retain_graph = false, bool create_graph = false,
                const TensorList& inputs = {}) const;
  Tensor detach() const;   // shares storage, no history
  Tensor& detach_();
  // Allocated under InferenceMode (or a view of such a tensor).
  bool is_inference() const;

  // Hooks (kiln/autograd.h has the handle). A gradient hook runs on the gradient of this tensor
  // before it is used: a leaf's before it accumulates into .grad, a non-leaf's before its
  // grad_fn (and retain_grad) see it. It returns a replacement of the same shape, dtype and
  // device, or an undefined tensor to keep the gradient; several run in registration order.
  autograd::RemovableHandle register_hook(std::function<Tensor(const Tensor&)> hook) const;
  template <typename F, std::enable_if_t<std::is_void_v<std::invoke_result_t<F&, const Tensor&>>, int> = 0>
  auto register_hook(F hook) const {  // a hook returning nothing keeps the gradient
    return register_hook(std::function<Tensor(const Tensor&)>([hook = std::move(hook)](const Tensor& g) mutable {
      hook(g);
      return Tensor();
    }));
  }
  // Leaves only: runs after .grad is updated, with this tensor.
  autograd::RemovableHandle register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const;

  // libtorch's indexing with a list (kiln/indexing.h): x.index({Slice(1, None), idx}) reads,
  // x.index_put_({Slice(), mask}, v) writes. The op index.Tensor's own form, x.index(TensorList),
  // is generated below; a braced list picks these.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(ArrayRef<indexing::TensorIndex> indices) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value);
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> indices, const Scalar& value);

  // Scalar-operand convenience used by formulas and users alike.
#include "kiln/gen/tensor_methods.h"
};

// ---- Creation ----
// The factories (zeros, arange, rand, ...) are ops: kiln/gen/factories.h, included below.
// Host data and Python numbers are not (their inputs are C++ values).
Tensor wrapped_scalar(const Scalar& s);  // 0-d tensor that promotes like a Python number
// Copy a host buffer of `sizes` elements of T into a new tensor.
template <typename T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes, TensorOptions opts = TensorOptions(dtype_of<T>));
template <typename T>
Tensor tensor(std::initializer_list<T> values, TensorOptions opts = TensorOptions(dtype_of<T>)) {
  return from_vector(std::vector<T>(values), {int64_t(values.size())}, opts);
}
Tensor from_blob_copy(const void* data, IntArrayRef sizes, DType dtype, Device device = kCPU);

}  // namespace kiln

// The factories of ops/factories.yaml and ops/random.yaml.
#include "kiln/gen/factories.h"  // IWYU pragma: export
#endif  // KILN_RUNTIME_INCLUDE_KILN_TENSOR_H_
