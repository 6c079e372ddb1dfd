#ifndef KILN_KERNELS_COMMON_ALONG_DIM_RULES_H_
#define KILN_KERNELS_COMMON_ALONG_DIM_RULES_H_
// The rules of the along_dim engine, shared by the CPU and CUDA engines
// (kernels/cpu/along_dim_engine.h, kernels/cuda/along_dim_engine.cuh): each line of
// [outer, D, inner] along dim is walked in order j = 0 .. D-1 with an int64 index k = indices[j]
// in [0, D) (the engines check it), and a rule moves one element between position j (`at`) and
// position k (`to`) of the line. A rule has
//   kZeroFirst              whether out starts as zeros (a rule that adds into it),
//   apply(out, self, at, to)
// Walking a line in order keeps a scatter deterministic without atomics.
#include <cstdint>
#include "kiln/common/math.h"
#include "kiln/dtype.h"

namespace kiln::along_dim {

// out[j] = self[indices[j]] (_cummaxmin_gather: cummax/cummin's gradient's adjoint)
template <typename T>
struct Gather {
  static constexpr bool kZeroFirst = false;
  KILN_HOST_DEVICE static void apply(T* out, const T* self, int64_t at, int64_t to) { out[at] = self[to]; }
};

// out[indices[j]] += self[j] in order of j (_cummaxmin_backward: cummax/cummin's gradient)
template <typename T>
struct ScatterAdd {
  static constexpr bool kZeroFirst = true;
  KILN_HOST_DEVICE static void apply(T* out, const T* self, int64_t at, int64_t to) {
    out[to] = T(opmath_t<T>(out[to]) + opmath_t<T>(self[at]));
  }
};

}  // namespace kiln::along_dim
#endif  // KILN_KERNELS_COMMON_ALONG_DIM_RULES_H_
