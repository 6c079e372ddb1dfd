// SavedVariable: a tensor kept for backward, with the checks PyTorch makes on unpack.
#include "internal.h"

namespace kiln {

namespace {
const char* kBackwardTwice =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call backward() or "
    "autograd::grad(). Specify retain_graph=true if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.";
}

SavedVariable::SavedVariable(const TensorBase& t, bool is_output) {
  if (!t.defined()) return;
  // Their in-place writes are not counted, so a later change could not be detected.
  KILN_CHECK(!t.storage()->is_inference(), AutogradError, "", "",
             "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
             "tensor and use it in autograd.");
  const AutogradMeta* meta = t.impl()->autograd();  // read directly: no Tensor handle on the recording path
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.version();
  output_nr_ = meta ? meta->output_nr : 0;
  is_leaf_ = !meta || !meta->grad_fn;
  if (is_output) {
    // The owner is re-attached at unpack; holding the output's history here would make
    // the node own itself. Any inexact output of a recording op carries a gradient.
    requires_grad_ = is_inexact(t.dtype());
    data_ = autograd::detail::alias(t);
  } else if (is_leaf_ && autograd::requires_grad(t)) {
    // A leaf keeps its identity so its gradient reaches the same .grad (double backward).
    // It has no grad_fn, and in-place ops on it are refused while recording: no cycle.
    requires_grad_ = true;
    data_ = t;
  } else {
    // Alias without metadata: a later in-place op may give `t` a grad_fn that saved `t`.
    requires_grad_ = autograd::requires_grad(t);
    if (meta) grad_fn_ = meta->grad_fn;
    data_ = autograd::detail::alias(t);
  }
}

TensorBase SavedVariable::unpack(const NodeRef& owner, const char* node_name) const {
  if (!was_defined_) {
    KILN_CHECK(!released_, AutogradError, node_name, "", kBackwardTwice);
    return TensorBase();
  }
  uint32_t version = data_.version();
  if (version != saved_version_) {
    std::string producer;
    if (is_output_) producer = std::string(", which is output ") + std::to_string(output_nr_) + " of " + node_name + ",";
    else if (grad_fn_) producer = std::string(", which is output ") + std::to_string(output_nr_) + " of " + grad_fn_->name() + ",";
    KILN_FAIL(AutogradError, node_name, "",
              "one of the variables needed for gradient computation has been modified by an inplace operation: [",
              node_name, ": ", dtype_name(data_.dtype()), " ", shape_str(data_.sizes()), "]", producer,
              " is at version ", version, "; expected version ", saved_version_,
              " instead. Hint: the tensor was changed in place after ", node_name,
              " saved it; clone it before the in-place op.");
  }
  if (is_output_) {
    if (!requires_grad_ || !owner) return data_;
    // Saved before set_history, an in-place op's output still carried its previous
    // node's output_nr; such outputs are single-output nodes' output 0.
    uint32_t nr = output_nr_ < owner->num_outputs ? output_nr_ : 0;
    return autograd::detail::alias_with_history(data_, owner, nr);
  }
  if (grad_fn_) return autograd::detail::alias_with_history(data_, grad_fn_, output_nr_);
  return data_;
}

}  // namespace kiln
