// The optimizers' shared machinery (parameters, gradients, state) and SGD.
#include "kiln/optim.h"
#include <algorithm>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/_fused_sgd_.h"

namespace kiln::optim {

Optimizer::Optimizer(TensorList params, const char* name)
    : params_(std::move(params)), state_(params_.size()), name_(name) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    KILN_CHECK(p.defined(), ValueError, name, "params", "parameter ", i, " is an undefined tensor");
    KILN_CHECK(p.requires_grad() && p.is_leaf(), ValueError, name, "params", "parameter ", i,
               " must be a leaf tensor that requires grad");
    KILN_CHECK(is_floating(p.dtype()), NotImplementedError, name, "params", "parameter ", i, " is ",
               dtype_name(p.dtype()), "; ", name, " supports real floating parameters only");
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = Tensor();
    } else {
      NoGradGuard no_grad;
      p.mutable_grad() = p.grad().detach();
      p.mutable_grad().zero_();
    }
  }
}

std::vector<size_t> Optimizer::with_grad() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].grad().defined()) out.push_back(i);
  return out;
}

Tensor& Optimizer::buffer(size_t i, const std::string& key, double fill) {
  Tensor& b = state_[i].buffers[key];
  if (!b.defined()) {
    b = zeros_like(params_[i].detach());  // the parameter's layout, so the fused kernels read it in place
    if (fill != 0) b.fill_(fill);
  }
  return b;
}

Tensor& Optimizer::advance_step(size_t i) {
  Tensor& s = state_[i].step;
  if (!s.defined()) s = zeros({}, TensorOptions(kFloat32, params_[i].device()));
  s.add_(1);
  return s;
}

void Optimizer::load_state(const std::vector<ParamState>& saved) {
  KILN_CHECK(saved.size() == params_.size(), ValueError, name_, "state", "loaded state has ", saved.size(),
             " entries for ", params_.size(), " parameters");
  const std::vector<std::string> known = buffer_names();
  for (size_t i = 0; i < saved.size(); ++i) {  // check everything before changing anything
    const Tensor& s = saved[i].step;
    KILN_CHECK(!s.defined() || s.numel() == 1, ValueError, name_, "state", "parameter ", i,
               ": step must hold one value");
    for (const auto& [key, t] : saved[i].buffers) {
      KILN_CHECK(std::find(known.begin(), known.end(), key) != known.end(), ValueError, name_, "state", "parameter ", i,
                 ": ", name_, " keeps no buffer '", key, "'");
      KILN_CHECK(t.defined() && t.sizes().equals(params_[i].sizes()), ShapeError, name_, "state", "parameter ", i,
                 ": buffer '", key, "' of shape ", t.defined() ? shape_str(t.sizes()) : std::string("(undefined)"),
                 " for a parameter of shape ", shape_str(params_[i].sizes()));
    }
  }
  NoGradGuard no_grad;
  std::vector<ParamState> loaded(saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    const Tensor& p = params_[i];
    if (saved[i].step.defined())
      loaded[i].step = saved[i].step.detach().reshape({}).to(kFloat32).to(p.device()).clone();
    for (const auto& [key, t] : saved[i].buffers) {
      Tensor copy = empty_like(p.detach());  // the parameter's layout and dtype, as torch casts floating state
      copy.copy_(t.detach());
      loaded[i].buffers[key] = copy;
    }
  }
  state_ = std::move(loaded);
}

SGD::SGD(TensorList params, SGDOptions options) : Optimizer(std::move(params), "SGD"), options_(options) {
  KILN_CHECK(options_.lr >= 0, ValueError, "SGD", "lr", "expected lr >= 0, got ", options_.lr);
  KILN_CHECK(options_.momentum >= 0, ValueError, "SGD", "momentum", "expected momentum >= 0, got ", options_.momentum);
  KILN_CHECK(options_.weight_decay >= 0, ValueError, "SGD", "weight_decay", "expected weight_decay >= 0, got ",
             options_.weight_decay);
  KILN_CHECK(!options_.nesterov || (options_.momentum > 0 && options_.dampening == 0), ValueError, "SGD", "nesterov",
             "nesterov momentum requires momentum > 0 and dampening == 0");
}

void SGD::step() {
  NoGradGuard no_grad;
  const SGDOptions& o = options_;
  // Parameters whose momentum buffer starts now take the gradient as it (torch's first step):
  // one fused call for them and one for the rest.
  TensorList params[2], grads[2], buffers[2];
  for (size_t i : with_grad()) {
    const bool first = o.momentum != 0 && !state_[i].buffers.count("momentum_buffer");
    params[first].push_back(params_[i]);
    grads[first].push_back(params_[i].grad());
    if (o.momentum != 0) buffers[first].push_back(buffer(i, "momentum_buffer"));
  }
  for (int first = 0; first < 2; ++first) {
    if (params[first].empty()) continue;
    _fused_sgd_(params[first], grads[first], buffers[first], o.weight_decay, o.momentum, o.lr, o.dampening, o.nesterov,
                o.maximize, /*is_first_step=*/first == 1);
  }
}

}  // namespace kiln::optim
