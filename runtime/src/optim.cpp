#include "kiln/optim.h"
#include <cmath>
#include "kiln/autograd.h"
#include "kiln/core.h"

namespace kiln::optim {

Optimizer::Optimizer(TensorList params, const char* name) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    KILN_CHECK(p.defined(), ValueError, name, "params", "parameter ", i, " is an undefined tensor");
    KILN_CHECK(p.requires_grad() && p.is_leaf(), ValueError, name, "params", "parameter ", i,
               " must be a leaf tensor that requires grad");
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

SGD::SGD(TensorList params, SGDOptions options)
    : Optimizer(std::move(params), "SGD"), options_(options), momentum_buffers_(params_.size()) {
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
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor d = p.grad().detach();
    if (o.weight_decay != 0) d = d.add(p, o.weight_decay);
    if (o.momentum != 0) {
      Tensor& buf = momentum_buffers_[i];
      if (!buf.defined()) buf = d.clone();  // first step: the buffer is the gradient itself
      else buf.mul_(o.momentum).add_(d, 1 - o.dampening);
      d = o.nesterov ? d.add(buf, o.momentum) : buf;
    }
    p.add_(d, -o.lr);
  }
}

Adam::Adam(TensorList params, AdamOptions options)
    : Optimizer(std::move(params), "Adam"),
      options_(options),
      exp_avg_(params_.size()),
      exp_avg_sq_(params_.size()),
      steps_(params_.size(), 0) {
  const AdamOptions& o = options_;
  KILN_CHECK(o.lr >= 0, ValueError, "Adam", "lr", "expected lr >= 0, got ", o.lr);
  KILN_CHECK(o.eps >= 0, ValueError, "Adam", "eps", "expected eps >= 0, got ", o.eps);
  KILN_CHECK(o.beta1 >= 0 && o.beta1 < 1, ValueError, "Adam", "beta1", "expected 0 <= beta1 < 1, got ", o.beta1);
  KILN_CHECK(o.beta2 >= 0 && o.beta2 < 1, ValueError, "Adam", "beta2", "expected 0 <= beta2 < 1, got ", o.beta2);
  KILN_CHECK(o.weight_decay >= 0, ValueError, "Adam", "weight_decay", "expected weight_decay >= 0, got ", o.weight_decay);
  for (size_t i = 0; i < params_.size(); ++i)
    KILN_CHECK(is_floating(params_[i].dtype()), NotImplementedError, "Adam", "params", "parameter ", i, " is ",
               dtype_name(params_[i].dtype()), "; Adam supports real floating parameters only");
}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor g = p.grad().detach();
    if (o.weight_decay != 0) g = g.add(p, o.weight_decay);
    Tensor& m = exp_avg_[i];
    Tensor& v = exp_avg_sq_[i];
    if (!m.defined()) {
      m = zeros_like(p);
      v = zeros_like(p);
    }
    int64_t t = ++steps_[i];
    m.mul_(o.beta1).add_(g, 1 - o.beta1);
    v.mul_(o.beta2).addcmul_(g, g, 1 - o.beta2);
    double bias_correction1 = 1 - std::pow(o.beta1, double(t));
    double bias_correction2 = 1 - std::pow(o.beta2, double(t));
    Tensor denom = v.sqrt().div(std::sqrt(bias_correction2)).add_(o.eps);
    p.addcdiv_(m, denom, -o.lr / bias_correction1);
  }
}

}  // namespace kiln::optim
