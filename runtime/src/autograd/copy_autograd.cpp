// Tensor's copy_ and fill_ under autograd (TensorBase's, which kernels use, never record): the
// values they overwrite get no gradient, copy_'s source gets the gradient, summed to its shape and
// cast to its dtype and device. On a view they rebase the base's history (view_history.cpp), so
// `x.select(0, i).copy_(v)` is PyTorch's `x[i] = v`. Forward-mode AD: self's tangent becomes src's (fill_: zero).
#include "internal.h"
#include "kiln/op_entry.h"

namespace kiln {

namespace {

class CopyBackwards final : public Node {
 public:
  const char* name() const override { return "CopyBackwards"; }
  TensorBaseList apply(TensorBaseList&& grads) override {
    TensorBaseList out(next_edges.size());  // self's old values were overwritten: no gradient
    if (grads.empty() || !grads[0].defined() || !next_edges[1].valid()) return out;
    Tensor g = autograd::sum_to(grads[0], src_sizes);
    if (g.dtype() != src_dtype) g = g.to(src_dtype);  // a real source of a complex copy gets the real part
    out[1] = g.device() == src_device ? g : g.to(src_device);
    return out;
  }
  DimVector src_sizes;
  DType src_dtype = DType::Float32;
  Device src_device;
};

class FillBackward final : public Node {
 public:
  const char* name() const override { return "FillBackward"; }
  TensorBaseList apply(TensorBaseList&&) override { return TensorBaseList(next_edges.size()); }
};

}  // namespace

Tensor& Tensor::copy_(const TensorBase& src, bool non_blocking) {
  const bool record = autograd::any_requires_grad({this, &src});
  Ref<CopyBackwards> node;
  if (record) {
    support::check_inplace(*this, "copy_");
    node = make_ref<CopyBackwards>();
    node->next_edges = {autograd::gradient_edge(*this), autograd::gradient_edge(src)};
    node->src_sizes = src.sizes();
    node->src_dtype = src.dtype();
    node->src_device = src.device();
  }
  const bool forward = autograd::forward_ad::any_dual({this, &src});
  TensorBase::copy_(src, non_blocking);
  if (record) autograd::rebase_history(*this, node);
  if (forward) {  // self's tangent becomes src's (zeros when src has none)
    const autograd::forward_ad::Suspend plain;
    Tensor t = autograd::forward_ad::tangent_or_zeros(src);
    autograd::forward_ad::write_tangent(*this, t.device() == device() ? t : t.to(device()));
  }
  return *this;
}

Tensor& Tensor::fill_(const Scalar& value) {
  const bool record = autograd::any_requires_grad({this});
  Ref<FillBackward> node;
  if (record) {
    support::check_inplace(*this, "fill_");
    node = make_ref<FillBackward>();
    node->next_edges = {autograd::gradient_edge(*this)};
  }
  const bool forward = autograd::forward_ad::any_dual({this});
  TensorBase::fill_(value);
  if (record) autograd::rebase_history(*this, node);
  if (forward) {  // a constant: its tangent is zero
    const autograd::forward_ad::Suspend plain;
    autograd::forward_ad::write_tangent(*this, zeros_like(*this));
  }
  return *this;
}

}  // namespace kiln
