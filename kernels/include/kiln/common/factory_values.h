#ifndef KILN_KERNELS_COMMON_FACTORY_VALUES_H_
#define KILN_KERNELS_COMMON_FACTORY_VALUES_H_
// Element i of arange, linspace and logspace, for host and device (one formula, so both
// backends give the same bits). The types follow PyTorch's kernels: integer ranges count in
// int64; floating ones in double (float for 16-bit dtypes); linspace steps in double for
// integral dtypes and in the compute type otherwise, and fills its first half up from start
// and its second half down from end, so both ends are exact.
#include <cstdint>
#include <type_traits>
#include "kiln/common/convert.h"
#include "kiln/common/math.h"

namespace kiln::factory {

template <typename T>
using range_acc_t = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, float>, double, float>;

template <typename T>
KILN_HOST_DEVICE KILN_INLINE T range_value(int64_t i, int64_t int_start, int64_t int_step, double start, double step) {
  if constexpr (std::is_integral_v<T>) {
    return T(int_start + i * int_step);
  } else {
    using Acc = range_acc_t<T>;
    return T(Acc(start) + Acc(step) * Acc(i));
  }
}

// The type linspace computes a step in.
template <typename T>
using linspace_step_t = std::conditional_t<std::is_integral_v<T>, double, opmath_t<T>>;

template <typename C>
struct LinspaceArgs {
  C start, end, step;
  int64_t steps;
};

// start and end come in T's compute type (Scalar::to<opmath_t<T>>()).
template <typename T>
LinspaceArgs<linspace_step_t<T>> linspace_args(opmath_t<T> start, opmath_t<T> end, int64_t steps) {
  using C = linspace_step_t<T>;
  const C s = C(start);
  const C e = steps == 1 ? s : C(end);  // one step is start
  const C step = steps > 1 ? (e - s) / C(double(steps - 1)) : C(0.0);
  return {s, e, step, steps};
}

template <typename C>
KILN_HOST_DEVICE KILN_INLINE C linspace_exponent(int64_t i, const LinspaceArgs<C>& a) {
  return i < a.steps / 2 ? a.start + a.step * C(double(i)) : a.end - a.step * C(double(a.steps - i - 1));
}

template <typename T, typename C>
KILN_HOST_DEVICE KILN_INLINE T linspace_value(int64_t i, const LinspaceArgs<C>& a) {
  return detail::convert<T>(linspace_exponent(i, a));
}

template <typename T, typename C>
KILN_HOST_DEVICE KILN_INLINE T logspace_value(int64_t i, const LinspaceArgs<C>& a, C base) {
  return detail::convert<T>(math::pow(base, linspace_exponent(i, a)));
}

}  // namespace kiln::factory
#endif  // KILN_KERNELS_COMMON_FACTORY_VALUES_H_
