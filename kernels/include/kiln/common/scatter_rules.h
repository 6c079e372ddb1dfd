#ifndef KILN_KERNELS_COMMON_SCATTER_RULES_H_
#define KILN_KERNELS_COMMON_SCATTER_RULES_H_
// How scatter combines a value into its place, shared by the CPU and CUDA kernels
// (kernels/cpu/scatter_gather.cpp, kernels/cuda/indexing.cu): PyTorch reduces in self's dtype
// (float16/bfloat16 through float), NaN wins amax/amin, bool sums are `or` and products `and`,
// and mean divides integers with floor.
#include <cstdint>
#include <type_traits>
#include "kiln/common/math.h"
#include "kiln/common/scatter_reduce_kind.h"
#include "kiln/dtype.h"

namespace kiln::scatter {

using meta::ScatterReduce;

template <typename T>
struct Rule {
  using M = opmath_t<T>;
  static constexpr bool kOrdered = !is_complex_v<T>;  // amax/amin exist

  KILN_HOST_DEVICE static T identity(ScatterReduce r) {
    if constexpr (std::is_same_v<T, bool>) return r == ScatterReduce::Prod || r == ScatterReduce::Amin;
    if (r == ScatterReduce::Prod) return T(1);
    if constexpr (kOrdered && !std::is_same_v<T, bool>) {
      if (r == ScatterReduce::Amax) return lowest();
      if (r == ScatterReduce::Amin) return highest();
    }
    return T(0);
  }

  KILN_HOST_DEVICE static T apply(ScatterReduce r, T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      if (r == ScatterReduce::None) return b;
      return r == ScatterReduce::Prod || r == ScatterReduce::Amin ? (a && b) : (a || b);
    } else {
      switch (r) {
        case ScatterReduce::Sum:
        case ScatterReduce::Mean:
          return T(M(a) + M(b));
        case ScatterReduce::Prod:
          return T(M(a) * M(b));
        case ScatterReduce::Amax:
          if constexpr (kOrdered) return math::isnan(M(a)) ? a : (math::isnan(M(b)) || M(b) > M(a)) ? b : a;
          break;
        case ScatterReduce::Amin:
          if constexpr (kOrdered) return math::isnan(M(a)) ? a : (math::isnan(M(b)) || M(b) < M(a)) ? b : a;
          break;
        case ScatterReduce::None:
          break;
      }
      return b;
    }
  }

  // mean: the sum over the `count` values that met at a place.
  KILN_HOST_DEVICE static T divide(T sum, int64_t count) {
    if constexpr (std::is_same_v<T, bool>) {
      return sum;
    } else if constexpr (std::is_integral_v<T>) {
      const int64_t s = int64_t(sum), q = s / count;
      return T((s % count != 0 && s < 0) ? q - 1 : q);  // floor, as PyTorch
    } else if constexpr (is_complex_v<T>) {
      using V = typename T::value_type;
      return T(sum.re / V(count), sum.im / V(count));
    } else {
      return T(M(sum) / M(count));
    }
  }

 private:
  KILN_HOST_DEVICE static T lowest() {
    if constexpr (std::is_integral_v<T>) {
      return std::is_signed_v<T> ? T(uint64_t(1) << (sizeof(T) * 8 - 1)) : T(0);
    } else {
      return T(-math::FloatLimits<M>::inf);
    }
  }
  KILN_HOST_DEVICE static T highest() {
    if constexpr (std::is_integral_v<T>) {
      return std::is_signed_v<T> ? T(~(uint64_t(1) << (sizeof(T) * 8 - 1))) : T(~T(0));
    } else {
      return T(math::FloatLimits<M>::inf);
    }
  }
};

}  // namespace kiln::scatter
#endif  // KILN_KERNELS_COMMON_SCATTER_RULES_H_
