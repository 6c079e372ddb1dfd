// Backward helpers of nn, pointwise and shape ops (see kiln/autograd/formulas.h). Only
// differentiable ops touch gradient values, so each helper can itself be differentiated.
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/log.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/pow.h"
#include "kiln/gen/api/real.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/square.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/where.h"

namespace kiln {

TensorBase derivative_not_implemented(const char* op) {
  KILN_FAIL(NotImplementedError, op, "", "the derivative for '", op, "' is not implemented (as in PyTorch)");
}

TensorBase softmax_backward_data(const TensorBase& grad_in, const TensorBase& result_in, int64_t dim) {
  const Tensor grad(grad_in);
  const Tensor result(result_in);
  int64_t d = wrap_dim(dim, result.dim(), "softmax_backward_data");
  return result * (grad - sum(grad * result, {d}, /*keepdim=*/true));
}

TensorBase log_softmax_backward_data(const TensorBase& grad_in, const TensorBase& result_in, int64_t dim) {
  const Tensor grad(grad_in);
  const Tensor result(result_in);
  int64_t d = wrap_dim(dim, result.dim(), "log_softmax_backward_data");
  return grad - exp(result) * sum(grad, {d}, /*keepdim=*/true);
}

TensorBase log_softmax_jvp(const TensorBase& tangent_in, const TensorBase& result_in, int64_t dim) {
  const Tensor tangent(tangent_in);
  const Tensor result(result_in);
  int64_t d = wrap_dim(dim, result.dim(), "log_softmax_jvp");
  return tangent - sum(exp(result) * tangent, {d}, /*keepdim=*/true);
}

TensorBase nll_loss_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& target_in,
                             const TensorBase& weight_in, int64_t reduction, int64_t ignore_index) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor target(target_in);
  const Tensor weight(weight_in);
  const char* op = "nll_loss_backward";
  KILN_CHECK(self.dim() >= 1, ShapeError, op, "self", "expected at least 1 dim, got 0");
  KILN_CHECK(reduction >= 0 && reduction <= 2, ValueError, op, "reduction",
             "expected 0 (none), 1 (mean) or 2 (sum), got ", reduction);
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  Tensor valid = target != ignore_index;
  // Ignored samples may name no class (-100): they point at class 0 with a zero gradient.
  Tensor safe_target = where(valid, target, zeros({}, target.options()));
  // Each sample's weight: weight[target], 0 for ignored samples.
  Tensor zero = zeros({}, grad.options());
  Tensor valid_weight = where(valid, ones({}, grad.options()), zero);
  Tensor sample_weight = weight.defined()
                             ? index_select(weight, 0, safe_target.reshape({-1})).reshape(target.sizes()) * valid_weight
                             : valid_weight;
  Tensor g = grad;
  if (reduction == 1) {
    // Mean divides by the total weight; with every sample ignored that is 0, and so is
    // every gradient (every sample weight is 0), as PyTorch.
    Tensor total = sum(sample_weight);
    g = g / where(total == 0, ones({}, grad.options()), total);
  }
  Tensor per_sample = -(g * sample_weight);
  return scatter(zeros(self.sizes(), grad.options()), class_dim, safe_target.unsqueeze(class_dim),
                 per_sample.unsqueeze(class_dim));
}

std::tuple<TensorBase, TensorBase, TensorBase> clamp_tensor_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                                     const TensorBase& min_in, const TensorBase& max_in,
                                                                     std::array<bool, 3> grad_input_mask) {
  const Tensor grad(grad_in), self(self_in), min(min_in), max(max_in);
  const Tensor zero = zeros({}, grad.options());
  Tensor in_range = min.defined() && max.defined() ? logical_and(self >= min, self <= max)
                    : min.defined()               ? self >= min
                                                  : self <= max;
  Tensor grad_self, grad_min, grad_max;
  if (grad_input_mask[0]) grad_self = where(in_range, grad, zero);
  if (min.defined() && grad_input_mask[1])
    grad_min = where(max.defined() ? logical_and(self < min, min < max) : self < min, grad, zero);
  if (max.defined() && grad_input_mask[2])
    grad_max = where(min.defined() ? logical_or(self > max, max < min) : self > max, grad, zero);
  return {grad_self, grad_min, grad_max};
}

TensorBase clamp_backward(const TensorBase& grad_in, const TensorBase& self_in, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  // The bounds themselves get the subgradient 1, as PyTorch.
  Tensor zero = zeros({}, grad.options());
  if (min && max) return where(logical_and(self >= *min, self <= *max), grad, zero);
  if (min) return where(self >= *min, grad, zero);
  if (max) return where(self <= *max, grad, zero);
  return grad;
}

namespace {
// exponent - 1 in the exponent's own kind, so integer powers stay integer powers.
Scalar minus_one(const Scalar& e) {
  if (e.is_complex()) {
    auto c = e.to<complex<double>>();
    return Scalar(complex<double>(c.re - 1, c.im));
  }
  if (e.is_floating()) return Scalar(e.to_double() - 1);
  return Scalar(e.to_int() - 1);
}
}  // namespace

TensorBase pow_backward(const TensorBase& grad_in, const TensorBase& self_in, const Scalar& exponent) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  bool is_zero = exponent.is_complex() ? exponent.to<complex<double>>() == complex<double>(0, 0)
                                       : exponent.to_double() == 0.0;
  if (is_zero) return zeros_like(self);
  return grad * conj(pow(self, minus_one(exponent)) * exponent);
}

TensorBase sgn_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& result_in) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor result(result_in);
  if (!is_complex(self.dtype())) return zeros_like(self);
  // w = z / |z|: dL/dz* = (g - Re(g conj(w)) w) / |z|, 0 where z = 0
  const Tensor magnitude = abs(self);
  const Tensor g = (grad - real(grad * conj(result)) * result) / magnitude;
  return where(magnitude == 0, zeros({}, g.options()), g);
}

TensorBase angle_backward(const TensorBase& grad_in, const TensorBase& self_in) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  if (!is_complex(self.dtype())) return zeros_like(self);
  // angle = atan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2, so the gradient is i z / |z|^2
  const Tensor g = grad * self * Scalar(complex<double>(0, 1)) / square(abs(self));
  return where(self == 0, zeros({}, g.options()), g);
}

std::tuple<TensorBase, TensorBase> pow_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                const TensorBase& exponent_in, const TensorBase& result_in,
                                                std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor exponent(exponent_in);
  const Tensor result(result_in);
  const Tensor zero = zeros({}, grad.options());
  Tensor grad_self, grad_exponent;
  if (mask[0]) grad_self = where(exponent == 0, zero, grad * conj(exponent * pow(self, exponent - 1)));
  if (mask[1]) {
    // d/de x^e = x^e log x, except 0^e with e >= 0 (real), where PyTorch uses 0 instead of
    // 0 * -inf. |e| == e holds exactly for real e >= 0, also for complex e.
    Tensor at_zero = logical_and(self == 0, abs(exponent) == exponent);
    Tensor base = self.dtype() == result.dtype() ? self : self.to(result.dtype());
    grad_exponent = grad * conj(where(at_zero, zero, result * log(base)));
  }
  return {grad_self, grad_exponent};
}

std::tuple<TensorBase, TensorBase> div_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                const TensorBase& other_in, std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor other(other_in);
  // d(a/b)/db = -a / b^2 = -(1 / b) * (a / b): other's gradient reuses self's (conjugated, as
  // every derivative a gradient is multiplied by)
  Tensor grad_self = grad / conj(other);
  Tensor grad_other;
  if (mask[1]) grad_other = -grad_self * conj(self / other);
  return {mask[0] ? grad_self : Tensor(), grad_other};
}

std::tuple<TensorBase, TensorBase> atan2_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                  const TensorBase& other_in, std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor other(other_in);
  const Tensor scaled = grad / (self * self + other * other);  // the denominator both share
  return {mask[0] ? scaled * other : Tensor(), mask[1] ? -scaled * self : Tensor()};
}

std::tuple<TensorBase, TensorBase> hypot_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                  const TensorBase& other_in, const TensorBase& result_in,
                                                  std::array<bool, 2> mask) {
  const Tensor self(self_in);
  const Tensor other(other_in);
  const Tensor scaled = Tensor(grad_in) / Tensor(result_in);
  return {mask[0] ? scaled * self : Tensor(), mask[1] ? scaled * other : Tensor()};
}

std::tuple<TensorBase, TensorBase> extremum_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                     const TensorBase& other_in, bool is_max,
                                                     std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor other(other_in);
  const Tensor tie = self == other;
  const Tensor half = grad / 2;
  Tensor grad_self, grad_other;
  if (mask[0]) grad_self = where(tie, half, grad * (is_max ? self > other : self < other));
  if (mask[1]) grad_other = where(tie, half, grad * (is_max ? other > self : other < self));
  return {grad_self, grad_other};
}

std::tuple<TensorBase, TensorBase> lerp_backward(const TensorBase& grad_in, const TensorBase& weight_in,
                                                 std::array<bool, 2> mask) {
  const Tensor grad(grad_in);
  const Tensor grad_end = grad * conj(weight_in);  // self's is grad * conj(1 - weight) = grad - this
  return {mask[0] ? grad - grad_end : Tensor(), mask[1] ? grad_end : Tensor()};
}

std::tuple<TensorBase, TensorBase> addcdiv_backward(const TensorBase& grad_in, const TensorBase& tensor1_in,
                                                    const TensorBase& tensor2_in, const Scalar& value,
                                                    std::array<bool, 2> mask) {
  const Tensor tensor1(tensor1_in);
  const Tensor tensor2(tensor2_in);
  const Tensor grad_tensor1 = Tensor(grad_in) * scalar_conj(value) / conj(tensor2);
  // d(t1 / t2)/dt2 = -(t1 / t2) / t2: tensor1's gradient times conj(-t1 / t2)
  return {mask[0] ? grad_tensor1 : Tensor(), mask[1] ? -grad_tensor1 * conj(tensor1 / tensor2) : Tensor()};
}

TensorBase permute_backward(const TensorBase& grad_in, IntArrayRef dims) {
  const Tensor grad(grad_in);
  int64_t n = int64_t(dims.size());
  DimVector inverse(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) inverse[size_t(wrap_dim(dims[size_t(i)], n, "permute_backward", "dims"))] = i;
  return grad.permute(inverse);
}

TensorList cat_backward(const TensorBase& grad_in, const std::vector<DimVector>& sizes, int64_t dim) {
  const Tensor grad(grad_in);
  TensorList out;
  out.reserve(sizes.size());
  if (sizes.empty()) return out;
  int64_t d = wrap_dim(dim, grad.dim(), "cat_backward");
  int64_t offset = 0;
  for (const DimVector& shape : sizes) {
    // Legacy: cat skips 1-D empty inputs whatever the other inputs' rank.
    if (shape.size() == 1 && shape[0] == 0) {
      out.push_back(zeros({0}, grad.options()));
      continue;
    }
    int64_t len = shape[size_t(d)];
    out.push_back(grad.narrow(d, offset, len));
    offset += len;
  }
  return out;
}

}  // namespace kiln
