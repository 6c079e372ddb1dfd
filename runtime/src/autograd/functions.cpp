// The small functions generated op stubs call to record history.
#include "internal.h"
#include "kiln/gen/api/sum.h"

namespace kiln::autograd {

bool requires_grad(const TensorBase& t) {
  if (!t.defined()) return false;
  if (t.impl()->view_info) refresh_view_history(t);  // its base may have gained history
  const AutogradMeta* meta = t.impl()->autograd();
  return meta && (meta->requires_grad || meta->grad_fn);
}

bool any_requires_grad(std::initializer_list<const TensorBase*> tensors) {
  if (!GradMode::is_enabled()) return false;
  for (const TensorBase* t : tensors)
    if (t && requires_grad(*t)) return true;
  return false;
}

bool any_requires_grad(const TensorList& tensors) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : tensors)
    if (requires_grad(t)) return true;
  return false;
}

Edge gradient_edge(const TensorBase& t) {
  if (!t.defined()) return {};
  if (t.impl()->view_info) refresh_view_history(t);
  const AutogradMeta* meta = t.impl()->autograd();
  if (!meta) return {};
  if (meta->grad_fn) return {meta->grad_fn, meta->output_nr};
  if (meta->requires_grad) return {detail::grad_accumulator(t), 0};
  return {};
}

void set_history(const TensorBase& output, const NodeRef& node, uint32_t output_nr) {
  // Integer and bool results never carry gradients (PyTorch: only floating/complex).
  if (!output.defined() || !is_inexact(output.dtype())) return;
  AutogradMeta& meta = output.impl()->autograd_or_create();
  meta.grad_fn = node;
  meta.output_nr = output_nr;
  if (ViewInfo* view = output.impl()->view_info.get()) view->version = output.version();  // history current
  // An in-place op gave a retaining tensor a new grad_fn: its gradient now passes there.
  if (meta.retains_grad && node) detail::retain_output(node.get(), output_nr);
}

void set_history(const TensorList& outputs, const NodeRef& node) {
  for (size_t i = 0; i < outputs.size(); ++i) set_history(outputs[i], node, uint32_t(i));
}

void check_inplace(const TensorBase& self, const char* op) {
  if (!GradMode::is_enabled() || !requires_grad(self)) return;
  KILN_CHECK(bool(self.impl()->autograd()->grad_fn), AutogradError, op, "self",
             "a leaf Variable that requires grad is being used in an in-place operation.");
}

TensorBase sum_to(const TensorBase& grad, IntArrayRef sizes) {
  if (!grad.defined() || grad.sizes().equals(sizes)) return grad;
  KILN_CHECK(detail::expandable_to(sizes, grad.sizes()), ShapeError, "sum_to", "sizes", "gradient of shape ",
             shape_str(grad.sizes()), " cannot be summed to ", shape_str(sizes),
             " (that shape does not broadcast to it)");
  size_t lead = size_t(grad.dim()) - sizes.size();
  DimVector dims;
  for (size_t i = 0; i < lead; ++i) dims.push_back(int64_t(i));
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 1 && grad.size(int64_t(lead + i)) != 1) dims.push_back(int64_t(lead + i));
  if (dims.empty()) return Tensor(grad).reshape(sizes);  // only leading size-1 dims differ
  Tensor r = sum(grad, dims.ref(), /*keepdim=*/true);
  return lead > 0 ? r.reshape(sizes) : r;
}

namespace detail {

TensorBase alias(const TensorBase& t) {
  TensorBase r(make_ref<TensorImpl>(t.storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset()));
  r.impl()->is_wrapped_number = t.impl()->is_wrapped_number;
  return r;
}

TensorBase alias_with_history(const TensorBase& t, const NodeRef& fn, uint32_t output_nr) {
  TensorBase r = alias(t);
  AutogradMeta& meta = r.impl()->autograd_or_create();
  meta.grad_fn = fn;
  meta.output_nr = output_nr;
  return r;
}

}  // namespace detail
}  // namespace kiln::autograd
