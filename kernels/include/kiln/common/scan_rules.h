#ifndef KILN_KERNELS_COMMON_SCAN_RULES_H_
#define KILN_KERNELS_COMMON_SCAN_RULES_H_
// The combine rules of the scan family, shared by the CPU and CUDA scan engines
// (kernels/cpu/scan_engine.h, kernels/cuda/scan_engine.cuh): the math of a scan is written
// once, here. A rule has
//   Acc                 the running value,
//   identity()          the value before the first element,
//   load(x, k)          element x at position k along the dim as an Acc,
//   combine(a, b)       a then b (b later in scan order); associative, since CUDA combines
//                       chunks of a row in a tree,
//   value(a)            what is stored in the result (and index(a), for rules that keep one,
//                       in the int64 indices),
//   kDefined            whether the rule exists for element type T (engines instantiate no more).
#include <cstdint>
#include <type_traits>
#include "kiln/common/math.h"
#include "kiln/dtype.h"

namespace kiln::scan {

template <typename T>
struct Sum {
  static constexpr bool kDefined = !std::is_same_v<T, bool>;  // the meta step refuses bool sums
  using Acc = opmath_t<T>;
  KILN_HOST_DEVICE static Acc identity() { return Acc(0); }
  KILN_HOST_DEVICE static Acc load(T x, int64_t) { return Acc(x); }
  KILN_HOST_DEVICE static Acc combine(Acc a, Acc b) { return a + b; }
  KILN_HOST_DEVICE static Acc value(Acc a) { return a; }
};

template <typename T>
struct Prod {
  static constexpr bool kDefined = !std::is_same_v<T, bool>;
  using Acc = opmath_t<T>;
  KILN_HOST_DEVICE static Acc identity() { return Acc(1); }
  KILN_HOST_DEVICE static Acc load(T x, int64_t) { return Acc(x); }
  KILN_HOST_DEVICE static Acc combine(Acc a, Acc b) { return a * b; }
  KILN_HOST_DEVICE static Acc value(Acc a) { return a; }
};

// A running sum that counts NaN as zero, as NumPy's and JAX's nancumsum (integers have none).
template <typename T>
struct NanSum {
  static constexpr bool kDefined = !std::is_same_v<T, bool>;
  using Acc = opmath_t<T>;
  KILN_HOST_DEVICE static Acc identity() { return Acc(0); }
  KILN_HOST_DEVICE static Acc load(T x, int64_t) {
    const Acc a = Acc(x);  // tested as Acc: float for float16 and bfloat16
    return math::isnan(a) ? Acc(0) : a;
  }
  KILN_HOST_DEVICE static Acc combine(Acc a, Acc b) { return a + b; }
  KILN_HOST_DEVICE static Acc value(Acc a) { return a; }
};

// log(exp(a) + exp(b)) without overflow, as PyTorch's logcumsumexp: NaN propagates, and two
// equal infinities give themselves (inf - inf would be NaN).
template <typename T>
struct LogAddExp {
  static constexpr bool kDefined = std::is_floating_point_v<opmath_t<T>>;
  using Acc = opmath_t<T>;
  KILN_HOST_DEVICE static Acc identity() { return -math::FloatLimits<Acc>::inf; }
  KILN_HOST_DEVICE static Acc load(T x, int64_t) { return Acc(x); }
  KILN_HOST_DEVICE static Acc combine(Acc a, Acc b) {
    if (math::isnan(a) || math::isnan(b)) return math::isnan(a) ? a : b;
    const Acc lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo == hi && !math::isfinite(lo)) return hi;
    return hi + math::log1p(math::exp(lo - hi));
  }
  KILN_HOST_DEVICE static Acc value(Acc a) { return a; }
};

// Running maximum (kMax) or minimum with its index, as PyTorch's cummax/cummin: a later
// element equal to the best so far takes over (the last index wins ties), and the first NaN
// stays once seen. index -1 marks the identity.
template <typename T, bool kMax>
struct Extreme {
  static constexpr bool kDefined = !is_complex_v<T>;
  struct Acc {
    opmath_t<T> v;
    int64_t i;
  };
  KILN_HOST_DEVICE static Acc identity() { return {opmath_t<T>(0), -1}; }
  KILN_HOST_DEVICE static Acc load(T x, int64_t k) { return {opmath_t<T>(x), k}; }
  KILN_HOST_DEVICE static Acc combine(Acc a, Acc b) {
    if (a.i < 0) return b;
    if (b.i < 0 || math::isnan(a.v)) return a;
    if (math::isnan(b.v)) return b;
    return (kMax ? b.v >= a.v : b.v <= a.v) ? b : a;
  }
  KILN_HOST_DEVICE static opmath_t<T> value(Acc a) { return a.v; }
  KILN_HOST_DEVICE static int64_t index(Acc a) { return a.i; }
};
template <typename T> using Max = Extreme<T, true>;
template <typename T> using Min = Extreme<T, false>;

}  // namespace kiln::scan
#endif  // KILN_KERNELS_COMMON_SCAN_RULES_H_
