#ifndef KILN_KERNELS_CUDA_DEVICE_RANDOM_H_
#define KILN_KERNELS_CUDA_DEVICE_RANDOM_H_
// uniform_/normal_ (and so rand, randn), randint, bernoulli and randperm on a contiguous CUDA tensor: the
// same Philox blocks, reserved the same way, through the same per-block functors as the CPU
// (random.cu, randperm.cu); the random ops reach them through the registered hooks
// (device_hooks.cpp).
#include "kiln/generator.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {

void uniform_fill(TensorBase& t, double from, double to, Generator& gen);
void normal_fill(TensorBase& t, double mean, double std, Generator& gen);
// Integers uniform on [low, low + range), range >= 1, into a real dtype.
void randint_fill(TensorBase& t, int64_t low, uint64_t range, Generator& gen);
// t[i] = 1 with probability p[i]; p is contiguous, on t's device, of t's floating dtype.
void bernoulli_fill(TensorBase& t, const TensorBase& p, Generator& gen);
// A random permutation of 0..t.numel()-1 into a 1-d tensor of a real dtype (kernels/cuda/randperm.cu).
void randperm_fill(TensorBase& t, Generator& gen);

}  // namespace kiln::cuda::detail
#endif  // KILN_KERNELS_CUDA_DEVICE_RANDOM_H_
