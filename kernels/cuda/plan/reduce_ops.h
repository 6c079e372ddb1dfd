#ifndef KILN_KERNELS_CUDA_PLAN_REDUCE_OPS_H_
#define KILN_KERNELS_CUDA_PLAN_REDUCE_OPS_H_
// How the CUDA reductions combine partial results (sum; max/min with NaN propagation; arg
// max/min with PyTorch's tie and NaN rules), KILN_HOST_DEVICE so the host tests replay a whole
// warp-and-block reduction tree with them and compare it with the CPU kernels.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include "kiln/half.h"
#include "kiln/macros.h"

namespace kiln::cuda_plan {

template <typename T>
KILN_HOST_DEVICE inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
#if defined(__CUDA_ARCH__)
    return isnan(v);
#else
    return std::isnan(v);
#endif
  } else {
    return false;
  }
}

// Accumulation type: float for 16-bit floats, int64 for integers, else the type itself.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                 std::conditional_t<std::is_integral_v<T>, int64_t, T>>;

template <typename Acc>
struct SumOp {
  KILN_HOST_DEVICE Acc init() const { return Acc(0); }
  KILN_HOST_DEVICE Acc combine(Acc a, Acc b) const { return a + b; }
};

template <typename Acc>
struct ProdOp {
  KILN_HOST_DEVICE Acc init() const { return Acc(1); }
  KILN_HOST_DEVICE Acc combine(Acc a, Acc b) const { return a * b; }
};

// all (kIsAll) / any over truth values (the kernels load "x != 0", NaN counting as true).
template <bool kIsAll>
struct LogicalOp {
  KILN_HOST_DEVICE bool init() const { return kIsAll; }
  KILN_HOST_DEVICE bool combine(bool a, bool b) const { return kIsAll ? (a && b) : (a || b); }
};

// NaN propagates: once a partial is NaN it stays NaN.
template <typename Acc, bool kMax>
struct MinMaxOp {
  KILN_HOST_DEVICE Acc init() const {
    if constexpr (std::is_floating_point_v<Acc>)
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    else
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  KILN_HOST_DEVICE Acc combine(Acc a, Acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return kMax ? (b > a ? b : a) : (b < a ? b : a);
  }
};

// A candidate of an arg reduction; index < 0 is "nothing yet".
template <typename Acc>
struct ArgPair {
  Acc value;
  int64_t index;
};

// NaN beats numbers, ties go to the first index (also among NaNs): whatever order the tree
// combines partials in, the result is the CPU's.
template <typename Acc, bool kMax>
struct ArgOp {
  KILN_HOST_DEVICE ArgPair<Acc> init() const { return {Acc(0), -1}; }
  KILN_HOST_DEVICE ArgPair<Acc> combine(ArgPair<Acc> a, ArgPair<Acc> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return an && bn ? (b.index < a.index ? b : a) : (an ? a : b);
    if (a.value == b.value) return b.index < a.index ? b : a;
    return (kMax ? b.value > a.value : b.value < a.value) ? b : a;
  }
  // combine(a, b) where b is a loaded element after every element of a (a thread's own
  // sequential loop): b wins only when strictly better, or NaN over a number, so ties and later
  // NaNs keep a. One select instead of combine's chain of branches.
  KILN_HOST_DEVICE ArgPair<Acc> step(ArgPair<Acc> a, ArgPair<Acc> b) const {
    const bool better = kMax ? b.value > a.value : b.value < a.value;
    const bool take = a.index < 0 || better || (is_nan(b.value) && !is_nan(a.value));
    return take ? b : a;
  }
};

// What a thread's own loop folds with: op.step(acc, next) where the op has one (next comes after
// everything in acc), else op.combine.
template <typename Op, typename V, typename W>
KILN_HOST_DEVICE inline auto fold(const Op& op, V acc, W next) -> decltype(op.step(acc, static_cast<V>(next))) {
  return op.step(acc, static_cast<V>(next));
}
template <typename Op, typename V, typename W, typename... NoStep>
KILN_HOST_DEVICE inline V fold(const Op& op, V acc, W next, NoStep...) {
  return op.combine(acc, static_cast<V>(next));
}

}  // namespace kiln::cuda_plan
#endif  // KILN_KERNELS_CUDA_PLAN_REDUCE_OPS_H_
