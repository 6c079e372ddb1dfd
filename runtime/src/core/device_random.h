#ifndef KILN_RUNTIME_SRC_CORE_DEVICE_RANDOM_H_
#define KILN_RUNTIME_SRC_CORE_DEVICE_RANDOM_H_
// uniform_/normal_ (and so rand, randn) on a contiguous CUDA tensor: the same Philox blocks,
// reserved the same way, through the same per-block functors as the CPU (kernels/cuda/random.cu).
#include "kiln/random.h"
#include "kiln/tensor.h"

namespace kiln::cuda::detail {

void uniform_fill(Tensor& t, double from, double to, Generator& gen);
void normal_fill(Tensor& t, double mean, double std, Generator& gen);

}  // namespace kiln::cuda::detail
#endif  // KILN_RUNTIME_SRC_CORE_DEVICE_RANDOM_H_
