#ifndef KILN_KERNELS_CUDA_PLAN_UNRAVEL_H_
#define KILN_KERNELS_CUDA_PLAN_UNRAVEL_H_
// Row-major unravelling of a flat element index over `sizes`, as the CUDA mask kernels use it
// (kernels/cuda/masking.cu): an operand's element offset through its strides (0 where it
// broadcasts), and the coordinates nonzero writes. Host-tested in tests/test_cuda_plan.cpp.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::cuda_plan {

KILN_HOST_DEVICE inline int64_t unravel_offset(int64_t i, int nd, const int64_t* sizes, const int64_t* strides) {
  int64_t offset = 0;
  for (int d = nd - 1; d >= 0; --d) {
    offset += (i % sizes[d]) * strides[d];
    i /= sizes[d];
  }
  return offset;
}

KILN_HOST_DEVICE inline void unravel_coordinates(int64_t flat, int nd, const int64_t* sizes, int64_t* coordinates) {
  for (int d = nd - 1; d >= 0; --d) {
    coordinates[d] = flat % sizes[d];
    flat /= sizes[d];
  }
}

}  // namespace kiln::cuda_plan
#endif  // KILN_KERNELS_CUDA_PLAN_UNRAVEL_H_
