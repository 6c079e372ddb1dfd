// Tensor's autograd methods (declared in kiln/tensor.h under "Autograd").
#include "internal.h"

namespace kiln {

namespace {
const NodeRef kNoNode;

// A retaining non-leaf picks up the gradients the engine parked for it.
void collect_retained(AutogradMeta* meta) {
  if (!meta || !meta->retains_grad || !meta->grad_fn) return;
  Tensor pending = autograd::detail::take_retained(meta->grad_fn.get(), meta->output_nr);
  if (!pending.defined()) return;
  meta->grad = meta->grad.defined() ? meta->grad + pending : std::move(pending);
}
}  // namespace

AutogradMeta::~AutogradMeta() {
  if (retains_grad && grad_fn) autograd::detail::forget_retained_output(grad_fn.get(), output_nr);
}

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  KILN_CHECK(defined(), ValueError, "requires_grad_", "self", "undefined tensor");
  if (!is_leaf()) {
    KILN_CHECK(requires_grad, AutogradError, "requires_grad_", "requires_grad",
               "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
               "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return *this;  // a non-leaf already requires grad
  }
  if (requires_grad) {
    KILN_CHECK(is_inexact(dtype()), AutogradError, "requires_grad_", "requires_grad",
               "only Tensors of floating point and complex dtype can require gradients, got ", dtype_name(dtype()));
    KILN_CHECK(!is_inference() || InferenceMode::is_enabled(), AutogradError, "requires_grad_", "requires_grad",
               "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
    impl_->autograd_or_create().requires_grad = true;
  } else if (AutogradMeta* meta = impl_->autograd()) {
    meta->requires_grad = false;
  }
  return *this;
}

Tensor Tensor::grad() const {
  AutogradMeta* meta = impl_ ? impl_->autograd() : nullptr;
  if (!meta) return Tensor();
  collect_retained(meta);
  return meta->grad;
}

Tensor& Tensor::mutable_grad() {
  KILN_CHECK(defined(), ValueError, "mutable_grad", "self", "undefined tensor");
  AutogradMeta& meta = impl_->autograd_or_create();
  collect_retained(&meta);
  return meta.grad;
}

void Tensor::set_grad(const Tensor& g) {
  KILN_CHECK(defined(), ValueError, "set_grad", "self", "undefined tensor");
  if (g.defined()) {
    KILN_CHECK(g.sizes().equals(sizes()), ShapeError, "set_grad", "grad", "assigned grad has shape ",
               kiln::shape_str(g.sizes()), " but the tensor has shape ", kiln::shape_str(sizes()));
    KILN_CHECK(g.dtype() == dtype(), DTypeError, "set_grad", "grad", "assigned grad has dtype ",
               dtype_name(g.dtype()), " but the tensor has dtype ", dtype_name(dtype()));
    KILN_CHECK(g.device() == device(), DeviceError, "set_grad", "grad", "assigned grad is on ", g.device().str(),
               " but the tensor is on ", device().str());
  }
  AutogradMeta& meta = impl_->autograd_or_create();
  collect_retained(&meta);  // drop what the engine parked: the assignment replaces it
  meta.grad = g;
}

const NodeRef& Tensor::grad_fn() const {
  if (impl_ && impl_->view_info) autograd::refresh_view_history(*this);
  const AutogradMeta* meta = impl_ ? impl_->autograd() : nullptr;
  return meta ? meta->grad_fn : kNoNode;
}

bool Tensor::is_leaf() const {
  if (impl_ && impl_->view_info) autograd::refresh_view_history(*this);
  const AutogradMeta* meta = impl_ ? impl_->autograd() : nullptr;
  return !meta || !meta->grad_fn;
}

uint32_t Tensor::output_nr() const {
  const AutogradMeta* meta = impl_ ? impl_->autograd() : nullptr;
  return meta ? meta->output_nr : 0;
}

void Tensor::retain_grad() const {
  KILN_CHECK(defined(), ValueError, "retain_grad", "self", "undefined tensor");
  KILN_CHECK(requires_grad(), AutogradError, "retain_grad", "self",
             "can't retain_grad on Tensor that has requires_grad=false");
  if (is_leaf()) return;  // leaves keep .grad anyway
  AutogradMeta& meta = impl_->autograd_or_create();
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  autograd::detail::retain_output(meta.grad_fn.get(), meta.output_nr);
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph, const TensorList& inputs) const {
  KILN_CHECK(defined(), ValueError, "backward", "self", "undefined tensor");
  autograd::backward({*this}, {gradient}, retain_graph, create_graph, inputs);
}

bool Tensor::is_inference() const { return defined() && storage()->is_inference(); }

Tensor Tensor::detach() const {
  KILN_CHECK(defined(), ValueError, "detach", "self", "undefined tensor");
  return autograd::detail::alias(*this);
}

Tensor& Tensor::detach_() {
  KILN_CHECK(defined(), ValueError, "detach_", "self", "undefined tensor");
  KILN_CHECK(!impl_->is_view || !requires_grad(), AutogradError, "detach_", "self",
             "Can't detach views in-place. Use detach() instead.");
  if (AutogradMeta* meta = impl_->autograd()) {
    meta->requires_grad = false;
    meta->retains_grad = false;
    meta->grad_fn = NodeRef();
    meta->output_nr = 0;
  }
  return *this;
}

}  // namespace kiln
