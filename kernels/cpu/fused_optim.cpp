// The fused optimizer steps on CPU (ops/optim.yaml): one pass over each parameter's elements,
// reading and writing param, grad and state once, split over threads by kiln's grain. The
// arithmetic is kiln/common/fused_optim.h's, the CUDA kernels' too. The meta step
// (kiln/meta/foreach.h) has checked the lists' lengths, sizes, dtypes and devices.
#include <cstdint>
#include <type_traits>
#include "kiln/common/fused_optim.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/fused_adam.h"
#include "kiln/gen/kernels/cpu/fused_adamw.h"
#include "kiln/gen/kernels/cpu/fused_sgd.h"
#include "kiln/kernel/foreach_dense.h"

namespace kiln::cpu {
namespace {

using foreach_dense::DenseGroup;
using namespace fused_optim;  // math_t, the DenseGroup slots

float read_scalar(const TensorBase& t) { return *static_cast<const float*>(t.data_ptr()); }

// The gradient scale of PyTorch's fused kernels: 1 when none is given.
struct GradScale {
  bool given;
  float scale;
};

GradScale grad_scale_of(const TensorBase& grad_scale) {
  return {grad_scale.defined(), grad_scale.defined() ? read_scalar(grad_scale) : 1.0f};
}

bool skipped(const TensorBase& found_inf) { return found_inf.defined() && read_scalar(found_inf) == 1.0f; }

// Calls fn with the flag as a compile-time constant.
template <typename Fn>
void with_flag(bool flag, const Fn& fn) {
  if (flag) fn(std::true_type{});
  else fn(std::false_type{});
}

template <typename Fn>
void with_decay(int decay, const Fn& fn) {
  if (decay == fused_optim::kL2) fn(std::integral_constant<int, fused_optim::kL2>{});
  else if (decay == fused_optim::kDecoupled) fn(std::integral_constant<int, fused_optim::kDecoupled>{});
  else fn(std::integral_constant<int, fused_optim::kNoDecay>{});
}

// Element i's gradient to step with: with a grad_scale, divided by it and written back unscaled
// (PyTorch's fused optimizers leave the gradients unscaled).
template <bool kScaled, typename M, typename T>
KILN_INLINE M unscaled_grad(T* __restrict g, int64_t i, M divisor) {
  M grad = M(g[i]);
  if constexpr (kScaled) {
    grad /= divisor;
    g[i] = T(grad);
  }
  return grad;
}

// [begin, end) of one parameter's dense run; the flags fixed, so the loop vectorizes.
template <typename T, bool kAmsgrad, int kDecay, bool kScaled>
void adam_run(const fused_optim::AdamStep<math_t<T>>& s, T* __restrict p, T* __restrict g, T* __restrict m,
              T* __restrict v, T* __restrict max_v, math_t<T> divisor, int64_t begin, int64_t end) {
  using M = math_t<T>;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    M grad = unscaled_grad<kScaled>(g, i, divisor);
    M param = M(p[i]), mean = M(m[i]), square = M(v[i]), peak = M(0);
    if constexpr (kAmsgrad) peak = M(max_v[i]);
    fused_optim::adam_update_as<M, kAmsgrad, kDecay>(s, param, grad, mean, square, peak);
    p[i] = T(param), m[i] = T(mean), v[i] = T(square);
    if constexpr (kAmsgrad) max_v[i] = T(peak);
  }
}

template <typename T>
void adam_one(const fused_optim::AdamStep<math_t<T>>& s, const DenseGroup& group, GradScale scale) {
  T* p = group.data<T>(kParam);
  T* g = group.data<T>(kGrad);
  T* m = group.data<T>(kState0);
  T* v = group.data<T>(kState1);
  T* max_v = group.data<T>(kState2);  // null without amsgrad
  const math_t<T> divisor = math_t<T>(scale.scale);
  with_flag(s.amsgrad, [&](auto amsgrad) {
    with_decay(s.decay, [&](auto decay) {
      with_flag(scale.given, [&](auto scaled) {
        kiln::detail::parallel_range(group.numel(), [&](int64_t begin, int64_t end) {
          adam_run<T, decltype(amsgrad)::value, decltype(decay)::value, decltype(scaled)::value>(s, p, g, m, v, max_v,
                                                                                                 divisor, begin, end);
        });
      });
    });
  });
}

void adam(bool decoupled, const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
          const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs, const TensorBaseList& max_exp_avg_sqs,
          const TensorBaseList& state_steps, const TensorBase& grad_scale, const TensorBase& found_inf, double lr,
          double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize) {
  const char* op = decoupled ? "_fused_adamw_" : "_fused_adam_";
  if (plan.length == 0 || skipped(found_inf)) return;
  const GradScale scale = grad_scale_of(grad_scale);
  for (int64_t i = 0; i < plan.length; ++i) {
    DenseGroup group(op, {self[i], grads[i], exp_avgs[i], exp_avg_sqs[i], amsgrad ? max_exp_avg_sqs[i] : TensorBase()},
                     {true, scale.given, true, true, true});
    const double step = read_scalar(state_steps[i]);
    visit_dtype(self[i].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) {  // the entry admits floating dtypes only
        const auto s =
            fused_optim::adam_step<math_t<T>>(lr, beta1, beta2, weight_decay, eps, step, decoupled, amsgrad, maximize);
        adam_one<T>(s, group, scale);
      }
    });
    group.finish();
  }
}

// [begin, end) of one parameter's dense run, as adam_run: the flags fixed, so the loop vectorizes.
template <typename T, bool kMomentum, bool kScaled>
void sgd_run(const fused_optim::SgdStep<math_t<T>>& s, T* __restrict p, T* __restrict g, T* __restrict buf,
             math_t<T> divisor, int64_t begin, int64_t end) {
  using M = math_t<T>;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    M grad = unscaled_grad<kScaled>(g, i, divisor);
    M param = M(p[i]), momentum = M(0);
    if constexpr (kMomentum) momentum = M(buf[i]);
    fused_optim::sgd_update_as<M, kMomentum>(s, param, grad, momentum);
    p[i] = T(param);
    if constexpr (kMomentum) buf[i] = T(momentum);
  }
}

template <typename T>
void sgd_one(const fused_optim::SgdStep<math_t<T>>& s, const DenseGroup& group, GradScale scale) {
  T* p = group.data<T>(kParam);
  T* g = group.data<T>(kGrad);
  T* buf = group.data<T>(kState0);  // null without momentum
  const math_t<T> divisor = math_t<T>(scale.scale);
  with_flag(buf != nullptr, [&](auto momentum) {
    with_flag(scale.given, [&](auto scaled) {
      kiln::detail::parallel_range(group.numel(), [&](int64_t begin, int64_t end) {
        sgd_run<T, decltype(momentum)::value, decltype(scaled)::value>(s, p, g, buf, divisor, begin, end);
      });
    });
  });
}

}  // namespace

void fused_adam(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
                const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs,
                const TensorBaseList& max_exp_avg_sqs, const TensorBaseList& state_steps, const TensorBase& grad_scale,
                const TensorBase& found_inf, double lr, double beta1, double beta2, double weight_decay, double eps,
                bool amsgrad, bool maximize) {
  adam(false, plan, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, lr, beta1,
       beta2, weight_decay, eps, amsgrad, maximize);
}

void fused_adamw(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
                 const TensorBaseList& exp_avgs, const TensorBaseList& exp_avg_sqs,
                 const TensorBaseList& max_exp_avg_sqs, const TensorBaseList& state_steps, const TensorBase& grad_scale,
                 const TensorBase& found_inf, double lr, double beta1, double beta2, double weight_decay, double eps,
                 bool amsgrad, bool maximize) {
  adam(true, plan, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, grad_scale, found_inf, lr, beta1,
       beta2, weight_decay, eps, amsgrad, maximize);
}

void fused_sgd(const meta::ForeachPlan& plan, const TensorBaseList& self, const TensorBaseList& grads,
               const TensorBaseList& momentum_buffer_list, const TensorBase& grad_scale, const TensorBase& found_inf,
               double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize,
               bool is_first_step) {
  if (plan.length == 0 || skipped(found_inf)) return;
  const GradScale scale = grad_scale_of(grad_scale);
  const bool with_momentum = momentum != 0;
  for (int64_t i = 0; i < plan.length; ++i) {
    DenseGroup group(
        "_fused_sgd_",
        {self[i], grads[i], with_momentum ? momentum_buffer_list[i] : TensorBase(), TensorBase(), TensorBase()},
        {true, scale.given, true, false, false});
    visit_dtype(self[i].dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) {
        using M = math_t<T>;
        const fused_optim::SgdStep<M> s{M(lr),    M(weight_decay), M(momentum),  M(dampening),
                                        nesterov, maximize,        is_first_step};
        sgd_one<T>(s, group, scale);
      }
    });
    group.finish();
  }
}

}  // namespace kiln::cpu
