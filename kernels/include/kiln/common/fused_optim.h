#ifndef KILN_KERNELS_COMMON_FUSED_OPTIM_H_
#define KILN_KERNELS_COMMON_FUSED_OPTIM_H_
// The per-element arithmetic of the fused optimizer ops (ops/optim.yaml), shared by the CPU and
// CUDA kernels so both backends take the same steps. M is the math type (float; double for
// float64 parameters): each element is loaded, updated in M and rounded once when stored.
#include <cmath>
#include "kiln/macros.h"

namespace kiln::fused_optim {

// What a parameter's Adam or AdamW step needs besides its elements: the options and the two
// bias corrections of its step (1 - beta1^step and sqrt(1 - beta2^step), computed in double).
template <typename M>
struct AdamStep {
  M lr, beta1, beta2, weight_decay, eps;
  M step_size;     // lr / (1 - beta1^step)
  M bias2_sqrt;    // sqrt(1 - beta2^step)
  bool decoupled;  // AdamW: the decay scales the parameter, not the gradient
  bool amsgrad, maximize;
};

template <typename M>
KILN_HOST_DEVICE inline AdamStep<M> adam_step(double lr, double beta1, double beta2, double weight_decay, double eps,
                                              double step, bool decoupled, bool amsgrad, bool maximize) {
  AdamStep<M> s;
  s.lr = M(lr), s.beta1 = M(beta1), s.beta2 = M(beta2), s.weight_decay = M(weight_decay), s.eps = M(eps);
  s.step_size = M(lr / (1.0 - std::pow(beta1, step)));
  s.bias2_sqrt = M(std::sqrt(1.0 - std::pow(beta2, step)));
  s.decoupled = decoupled, s.amsgrad = amsgrad, s.maximize = maximize;
  return s;
}

// One element: g is the (unscaled) gradient; max_v is read and written only with amsgrad.
template <typename M>
KILN_HOST_DEVICE inline void adam_update(const AdamStep<M>& s, M& p, M g, M& m, M& v, M& max_v) {
  if (s.maximize) g = -g;
  if (s.weight_decay != M(0)) {
    if (s.decoupled) p -= s.lr * s.weight_decay * p;
    else g += s.weight_decay * p;
  }
  m = s.beta1 * m + (M(1) - s.beta1) * g;
  v = s.beta2 * v + (M(1) - s.beta2) * g * g;
  M second = v;
  if (s.amsgrad) {
    max_v = (max_v != max_v || max_v > v) ? max_v : v;  // a NaN on either side wins, as torch.maximum
    second = max_v;
  }
  const M denom = std::sqrt(second) / s.bias2_sqrt + s.eps;
  p -= s.step_size * m / denom;
}

template <typename M>
struct SgdStep {
  M lr, weight_decay, momentum, dampening;
  bool nesterov, maximize, first;  // first: each buffer starts at the gradient
};

// One element; buf is read and written only when momentum != 0.
template <typename M>
KILN_HOST_DEVICE inline void sgd_update(const SgdStep<M>& s, M& p, M g, M& buf) {
  if (s.maximize) g = -g;
  if (s.weight_decay != M(0)) g += s.weight_decay * p;
  if (s.momentum != M(0)) {
    buf = s.first ? g : s.momentum * buf + (M(1) - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * buf : buf;
  }
  p -= s.lr * g;
}

}  // namespace kiln::fused_optim
#endif  // KILN_KERNELS_COMMON_FUSED_OPTIM_H_
