#ifndef KILN_KERNELS_CUDA_ELEMENTWISE_ARGS_H_
#define KILN_KERNELS_CUDA_ELEMENTWISE_ARGS_H_
// A pointwise call as the CUDA kernels see it: what the generated dtype switch reads (compute
// dtype, scalars, choices) and the operands' coalesced geometry, with no TensorBase in sight, so a
// generated kernel file compiles without tensor.h. Filled on the host by ElementwiseLaunch
// (kernels/cuda/elementwise_launch.h), which also keeps the device current meanwhile.
#include <cuda_runtime_api.h>
#include <cstdint>
#include "kiln/pointwise_dispatch.h"
#include "kiln/strided_geometry.h"

namespace kiln::cuda {

struct ElementwiseArgs {
  const char* op = "pointwise";  // for errors
  DType compute_dtype = DType::Float32;
  Scalar scalars[kMaxPointwiseScalars];
  bool scalar_given[kMaxPointwiseScalars] = {};
  int64_t choices[2] = {0, 0};
  StridedGeometry geometry;  // operand 0 is the output, then the inputs
  Device where;
  cudaStream_t stream = nullptr;
  int sms = 0;  // the device's multiprocessors, for the grid size
  Device device() const { return where; }
};

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_ELEMENTWISE_ARGS_H_
