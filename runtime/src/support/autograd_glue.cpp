// Glue between generated backward nodes and the autograd engine.
#include "kiln/op_support.h"

namespace kiln::support {

bool any_defined(const TensorBaseList& grads) {
  for (const TensorBase& g : grads)
    if (g.defined()) return true;
  return false;
}

TensorBase grad_or_zeros(const TensorBaseList& grads, size_t i, const Node::List<Node::OutputMeta>& meta) {
  if (i < grads.size() && grads[i].defined()) return grads[i];
  KILN_CHECK(i < meta.size(), InternalError, "autograd", "", "no metadata for output ", i);
  return zeros(meta[i].sizes, TensorOptions(meta[i].dtype, meta[i].device));
}

void add_output_meta(Node& node, const TensorBase& output) {
  node.output_meta.push_back({DimVector(output.sizes()), output.dtype(), output.device()});
  node.num_outputs = uint32_t(node.output_meta.size());
}

TensorBase finish_grad(const TensorBase& grad, IntArrayRef sizes, DType dtype) {
  if (!grad.defined()) return grad;
  Tensor g = grad;
  if (!g.sizes().equals(sizes)) g = autograd::sum_to(g, sizes);
  if (g.dtype() != dtype) {
    // A real input that met a complex computation receives the real part, as in PyTorch.
    g = g.to(dtype);
  }
  return g;
}

void check_inplace(const TensorBase& self, const char* op) {
  autograd::check_inplace(self, op);
  const ViewInfo* view = self.impl()->view_info.get();
  if (!view || !GradMode::is_enabled()) return;
  KILN_CHECK(bool(view->replay), AutogradError, op, "self",
             "this view is the output of a function that returns multiple views (split, chunk). Such functions do "
             "not allow the output views to be modified inplace. You should replace the inplace operation by an "
             "out-of-place one.");
  const AutogradMeta* base = view->base.impl()->autograd();
  KILN_CHECK(!(base && base->requires_grad && !base->grad_fn), AutogradError, op, "self",
             "a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

void mark_view(const Tensor& result, const Tensor& base, ViewReplay replay) {
  if (!result.defined() || !base.defined() || result.is_same(base) || result.storage() != base.storage()) return;
  result.impl()->is_view = true;
  auto info = std::make_shared<ViewInfo>();
  if (const ViewInfo* parent = base.impl()->view_info.get()) {
    // a view of a view: made from the root base by the parent's replay, then this one
    info->base = parent->base;
    if (parent->replay && replay)
      info->replay = [first = parent->replay, then = std::move(replay)](const TensorBase& b) { return then(first(b)); };
  } else {
    info->base = base;
    info->replay = std::move(replay);
  }
  info->version = result.version();
  result.impl()->view_info = std::move(info);
}

void mark_view(const TensorList& results, const Tensor& base) {
  for (const Tensor& r : results) mark_view(r, base, ViewReplay());
}

bool returns_input(const Tensor& result, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs)
    if (result.is_same(*t)) return true;
  return false;
}

}  // namespace kiln::support
