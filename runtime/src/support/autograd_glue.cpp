// Glue between generated backward nodes and the autograd engine.
#include "kiln/op_support.h"

namespace kiln::support {

bool any_defined(const TensorBaseList& grads) {
  for (const TensorBase& g : grads)
    if (g.defined()) return true;
  return false;
}

TensorBase grad_or_zeros(const TensorBaseList& grads, size_t i, const std::vector<Node::OutputMeta>& meta) {
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
  KILN_CHECK(!self.impl()->is_view, NotImplementedError, op, "self",
             "in-place operations on views are not supported while autograd records (the view's base would "
             "miss the change); use the out-of-place op, or run under NoGradGuard");
}

void mark_view(const Tensor& result, const Tensor& base) {
  if (result.defined() && base.defined() && !result.is_same(base) && result.storage() == base.storage())
    result.impl()->is_view = true;
}

void mark_view(const TensorList& results, const Tensor& base) {
  for (const Tensor& r : results) mark_view(r, base);
}

bool returns_input(const Tensor& result, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* t : inputs)
    if (result.is_same(*t)) return true;
  return false;
}

}  // namespace kiln::support
