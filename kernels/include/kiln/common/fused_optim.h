#ifndef KILN_KERNELS_COMMON_FUSED_OPTIM_H_
#define KILN_KERNELS_COMMON_FUSED_OPTIM_H_
// The per-element arithmetic of the fused optimizer ops (ops/optim.yaml), shared by the CPU and
// CUDA kernels so both backends take the same steps. M is the math type (float; double for
// float64 parameters): each element is loaded, updated in M and rounded once when stored.
#include <cmath>
#include <type_traits>
#include "kiln/macros.h"

namespace kiln::fused_optim {

// The math type of a parameter dtype T: double for double, float for the rest.
template <typename T>
using math_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// The tensors of one parameter in a kernel's DenseGroup (kiln/kernel/foreach_dense.h): param,
// grad, then the op's state in schema order.
enum Slot { kParam, kGrad, kState0, kState1, kState2 };

// How the weight decay enters an Adam step: not at all, added to the gradient (Adam's L2), or
// scaling the parameter (AdamW's decoupled decay).
enum Decay : int { kNoDecay, kL2, kDecoupled };

// What a parameter's Adam or AdamW step needs besides its elements: the options and the two
// bias corrections of its step (1 - beta1^step and sqrt(1 - beta2^step), computed in double).
template <typename M>
struct AdamStep {
  M lr, beta1, beta2, weight_decay, eps;
  M step_size;   // lr / (1 - beta1^step)
  M bias2_sqrt;  // sqrt(1 - beta2^step)
  M grad_sign;   // -1 to maximize: an exact negation
  int decay;     // a Decay
  bool amsgrad;
};

template <typename M>
KILN_HOST_DEVICE inline AdamStep<M> adam_step(double lr, double beta1, double beta2, double weight_decay, double eps,
                                              double step, bool decoupled, bool amsgrad, bool maximize) {
  AdamStep<M> s;
  s.lr = M(lr), s.beta1 = M(beta1), s.beta2 = M(beta2), s.weight_decay = M(weight_decay), s.eps = M(eps);
  s.step_size = M(lr / (1.0 - std::pow(beta1, step)));
  s.bias2_sqrt = M(std::sqrt(1.0 - std::pow(beta2, step)));
  s.grad_sign = maximize ? M(-1) : M(1);
  s.decay = weight_decay == 0 ? kNoDecay : decoupled ? kDecoupled : kL2;
  s.amsgrad = amsgrad;
  return s;
}

// One element, with amsgrad and the decay fixed at compile time so that a CPU loop over it has
// no branch and vectorizes. g is the (unscaled) gradient; max_v is read and written only with
// amsgrad.
template <typename M, bool kAmsgrad, int kDecay>
KILN_HOST_DEVICE inline void adam_update_as(const AdamStep<M>& s, M& p, M g, M& m, M& v, M& max_v) {
  g *= s.grad_sign;
  if constexpr (kDecay == kL2) g += s.weight_decay * p;
  if constexpr (kDecay == kDecoupled) p -= s.lr * s.weight_decay * p;
  m = s.beta1 * m + (M(1) - s.beta1) * g;
  v = s.beta2 * v + (M(1) - s.beta2) * g * g;
  M second = v;
  if constexpr (kAmsgrad) {
    max_v = (max_v != max_v || max_v > v) ? max_v : v;  // a NaN on either side wins, as torch.maximum
    second = max_v;
  }
  const M denom = std::sqrt(second) / s.bias2_sqrt + s.eps;
  p -= s.step_size * m / denom;
}

// The same with the flags read at run time (the CUDA kernel: every thread takes the same branch).
template <typename M>
KILN_HOST_DEVICE inline void adam_update(const AdamStep<M>& s, M& p, M g, M& m, M& v, M& max_v) {
  if (s.amsgrad) {
    if (s.decay == kL2) adam_update_as<M, true, kL2>(s, p, g, m, v, max_v);
    else if (s.decay == kDecoupled) adam_update_as<M, true, kDecoupled>(s, p, g, m, v, max_v);
    else adam_update_as<M, true, kNoDecay>(s, p, g, m, v, max_v);
  } else {
    if (s.decay == kL2) adam_update_as<M, false, kL2>(s, p, g, m, v, max_v);
    else if (s.decay == kDecoupled) adam_update_as<M, false, kDecoupled>(s, p, g, m, v, max_v);
    else adam_update_as<M, false, kNoDecay>(s, p, g, m, v, max_v);
  }
}

template <typename M>
struct SgdStep {
  M lr, weight_decay, momentum, dampening;
  bool nesterov, maximize, first;  // first: each buffer starts at the gradient
};

// One element, whether there is momentum fixed at compile time (buf is read and written only
// with it); the other options are selects, so a loop over elements vectorizes (the CPU's).
template <typename M, bool kMomentum>
KILN_HOST_DEVICE inline void sgd_update_as(const SgdStep<M>& s, M& p, M g, M& buf) {
  g = s.maximize ? -g : g;
  g = s.weight_decay != M(0) ? g + s.weight_decay * p : g;  // not p * 0: an infinite p stays out
  if constexpr (kMomentum) {
    buf = s.first ? g : s.momentum * buf + (M(1) - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * buf : buf;
  }
  p -= s.lr * g;
}

// The same with momentum read at run time (momentum != 0).
template <typename M>
KILN_HOST_DEVICE inline void sgd_update(const SgdStep<M>& s, M& p, M g, M& buf) {
  if (s.momentum != M(0)) sgd_update_as<M, true>(s, p, g, buf);
  else sgd_update_as<M, false>(s, p, g, buf);
}

}  // namespace kiln::fused_optim
#endif  // KILN_KERNELS_COMMON_FUSED_OPTIM_H_
