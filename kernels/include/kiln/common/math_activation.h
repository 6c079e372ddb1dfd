#ifndef KILN_KERNELS_COMMON_MATH_ACTIVATION_H_
#define KILN_KERNELS_COMMON_MATH_ACTIVATION_H_
// Activation functions with PyTorch's formulas (same expressions, so same rounding).
#include "math_complex.h"
#include "math_float.h"

namespace kiln::math {

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }
template <typename T>
KILN_HOST_DEVICE inline complex<T> sigmoid(complex<T> z) {
  return complex<T>(T(1)) / (complex<T>(T(1)) + exp(-z));
}

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T silu(T x) { return x / (T(1) + exp(-x)); }
template <typename T>
KILN_HOST_DEVICE inline complex<T> silu(complex<T> z) { return z / (complex<T>(T(1)) + exp(-z)); }

// max(x, 0); NaN and -0.0 pass through, as torch.relu.
template <typename T, std::enable_if_t<!is_complex_v<T> && !is_bool_v<T>, int> = 0>
KILN_HOST_DEVICE inline T relu(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;
  else return x < T(0) ? T(0) : x;
}

// approximate: 0 = 'none' (erf), 1 = 'tanh'.
namespace detail {
template <typename T> inline constexpr T kSqrtHalf = T(0.70710678118654752440);    // 1/sqrt(2)
template <typename T> inline constexpr T kSqrt2OverPi = T(0.79788456080286535588);  // sqrt(2/pi)
template <typename T> inline constexpr T kInvSqrt2Pi = T(0.39894228040143267794);   // 1/sqrt(2 pi)
template <typename T> inline constexpr T kGeluKappa = T(0.044715);
}  // namespace detail

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T gelu(T x, int64_t approximate) {
  if (approximate == 1) {
    T inner = detail::kSqrt2OverPi<T> * (x + detail::kGeluKappa<T> * x * x * x);
    return T(0.5) * x * (T(1) + std::tanh(inner));
  }
  return x * T(0.5) * (T(1) + std::erf(x * detail::kSqrtHalf<T>));
}

// d gelu(x) / dx.
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T gelu_grad(T x, int64_t approximate) {
  if (approximate == 1) {
    T x_sq = x * x;
    T inner = detail::kSqrt2OverPi<T> * (x + detail::kGeluKappa<T> * x_sq * x);
    T t = std::tanh(inner);
    T d_inner = detail::kSqrt2OverPi<T> * (T(1) + T(3) * detail::kGeluKappa<T> * x_sq);
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * d_inner;
  }
  T cdf = T(0.5) * (T(1) + std::erf(x * detail::kSqrtHalf<T>));
  T pdf = detail::kInvSqrt2Pi<T> * std::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}

// x for x > 0, else scale * alpha * (exp(x * input_scale) - 1) (expm1: exact near 0).
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T elu(T x, T alpha, T scale, T input_scale) {
  return x <= T(0) ? std::expm1(x * input_scale) * alpha * scale : x * scale;
}

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T mish(T x) { return x * std::tanh(std::log1p(std::exp(x))); }

// log(1 + exp(beta x)) / beta, and x itself once beta x > threshold.
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T softplus(T x, T beta, T threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}

// PyTorch's piecewise activations, in its expressions (relu6 is hardtanh(0, 6)).
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T relu6(T x) {
  return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T hardsigmoid(T x) {
  return relu6(x + T(3)) / T(6);
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T hardswish(T x) {
  return x * relu6(x + T(3)) / T(6);
}

// selu is elu with the self-normalizing constants; celu(x, alpha) = elu(x, alpha, 1, 1 / alpha).
namespace detail {
template <typename T>
inline constexpr T kSeluAlpha = T(1.6732632423543772848170429916717);
template <typename T>
inline constexpr T kSeluScale = T(1.0507009873554804934193349852946);
}  // namespace detail
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T selu(T x) {
  return elu(x, detail::kSeluAlpha<T>, detail::kSeluScale<T>, T(1));
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T celu(T x, T alpha) {
  return elu(x, alpha, T(1), T(1) / alpha);
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|.
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T log_sigmoid(T x) {
  return (x < T(0) ? x : T(0)) - std::log1p(std::exp(-std::abs(x)));
}

template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T softsign(T x) {
  return x / (T(1) + std::abs(x));
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T tanhshrink(T x) {
  return x - std::tanh(x);
}

// Shrinkage: values within [-lambd, lambd] become 0 (lambd >= 0 is checked by the op).
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T softshrink(T x, T lambd) {
  return x > lambd ? x - lambd : (x < -lambd ? x + lambd : T(0));
}
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T hardshrink(T x, T lambd) {
  return (x >= -lambd && x <= lambd) ? T(0) : x;
}

// The sigmoid approximation of gelu, x * sigmoid(1.702 x), several GPU backends' default "gelu".
template <typename T, std::enable_if_t<is_floating_v<T>, int> = 0>
KILN_HOST_DEVICE inline T quick_gelu(T x) {
  return x * sigmoid(T(1.702) * x);
}

}  // namespace kiln::math
#endif  // KILN_KERNELS_COMMON_MATH_ACTIVATION_H_
