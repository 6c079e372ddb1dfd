// RMSprop and Adagrad, composed of kiln's in-place ops per parameter in torch.optim's order
// (PyTorch has no fused kernels for them).
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/optim.h"

namespace kiln::optim {
namespace {

// The gradient a step uses: negated to maximize, plus weight_decay * p.
Tensor effective_grad(const Tensor& p, bool maximize, double weight_decay) {
  Tensor g = p.grad().detach();
  if (maximize) g = g.neg();
  if (weight_decay != 0) g = g.add(p, weight_decay);
  return g;
}

}  // namespace

RMSprop::RMSprop(TensorList params, RMSpropOptions options)
    : Optimizer(std::move(params), "RMSprop"), options_(options) {
  const RMSpropOptions& o = options_;
  KILN_CHECK(o.lr >= 0, ValueError, "RMSprop", "lr", "Invalid learning rate: ", o.lr);
  KILN_CHECK(o.eps >= 0, ValueError, "RMSprop", "eps", "Invalid epsilon value: ", o.eps);
  KILN_CHECK(o.momentum >= 0, ValueError, "RMSprop", "momentum", "Invalid momentum value: ", o.momentum);
  KILN_CHECK(o.weight_decay >= 0, ValueError, "RMSprop", "weight_decay",
             "Invalid weight_decay value: ", o.weight_decay);
  KILN_CHECK(o.alpha >= 0, ValueError, "RMSprop", "alpha", "Invalid alpha value: ", o.alpha);
}

void RMSprop::step() {
  NoGradGuard no_grad;
  const RMSpropOptions& o = options_;
  for (size_t i : with_grad()) {
    Tensor& p = params_[i];
    advance_step(i);
    const Tensor g = effective_grad(p, o.maximize, o.weight_decay);
    Tensor& square_avg = buffer(i, "square_avg");
    square_avg.mul_(o.alpha).addcmul_(g, g, 1 - o.alpha);
    Tensor avg;
    if (o.centered) {
      Tensor& grad_avg = buffer(i, "grad_avg");
      grad_avg.mul_(o.alpha).add_(g, 1 - o.alpha);
      avg = square_avg.addcmul(grad_avg, grad_avg, -1).sqrt_();
    } else {
      avg = square_avg.sqrt();
    }
    avg.add_(o.eps);
    if (o.momentum > 0) {
      Tensor& buf = buffer(i, "momentum_buffer");
      buf.mul_(o.momentum).addcdiv_(g, avg);
      p.add_(buf, -o.lr);
    } else {
      p.addcdiv_(g, avg, -o.lr);
    }
  }
}

Adagrad::Adagrad(TensorList params, AdagradOptions options)
    : Optimizer(std::move(params), "Adagrad"), options_(options) {
  const AdagradOptions& o = options_;
  KILN_CHECK(o.lr >= 0, ValueError, "Adagrad", "lr", "Invalid learning rate: ", o.lr);
  KILN_CHECK(o.lr_decay >= 0, ValueError, "Adagrad", "lr_decay", "Invalid lr_decay value: ", o.lr_decay);
  KILN_CHECK(o.weight_decay >= 0, ValueError, "Adagrad", "weight_decay",
             "Invalid weight_decay value: ", o.weight_decay);
  KILN_CHECK(o.initial_accumulator_value >= 0, ValueError, "Adagrad", "initial_accumulator_value",
             "Invalid initial_accumulator_value value: ", o.initial_accumulator_value);
  KILN_CHECK(o.eps >= 0, ValueError, "Adagrad", "eps", "Invalid epsilon value: ", o.eps);
}

void Adagrad::step() {
  NoGradGuard no_grad;
  const AdagradOptions& o = options_;
  for (size_t i : with_grad()) {
    Tensor& p = params_[i];
    Tensor& sum = buffer(i, "sum", o.initial_accumulator_value);
    const double step = advance_step(i).item<double>();
    const Tensor g = effective_grad(p, o.maximize, o.weight_decay);
    const double clr = o.lr / (1 + (step - 1) * o.lr_decay);
    sum.addcmul_(g, g, 1);
    p.addcdiv_(g, sum.sqrt().add_(o.eps), -clr);
  }
}

}  // namespace kiln::optim
