#ifndef KILN_KERNELS_CPU_DEVICE_RANDOM_H_
#define KILN_KERNELS_CPU_DEVICE_RANDOM_H_
// uniform_/normal_ (and so rand, randn), randint, bernoulli and randperm on a contiguous CPU
// tensor (random.cpp, over random_fill.h): the random ops reach them through the CPU's hook
// table (device_hooks.cpp), as they reach the CUDA backend's.
#include "kiln/generator.h"
#include "kiln/tensor_base.h"

namespace kiln::cpu::detail {

// Complex tensors are filled as 2n reals (normal: std / sqrt(2) per part), as on CUDA.
void uniform_fill(TensorBase& t, double from, double to, Generator& gen);
void normal_fill(TensorBase& t, double mean, double std, Generator& gen);
// Integers uniform on [low, low + range), range >= 1, into a real dtype.
void randint_fill(TensorBase& t, int64_t low, uint64_t range, Generator& gen);
// t[i] = 1 with probability p[i]; p is contiguous, on the CPU, of t's floating dtype.
void bernoulli_fill(TensorBase& t, const TensorBase& p, Generator& gen);
// A random permutation of 0..t.numel()-1 into a 1-d tensor of a real dtype.
void randperm_fill(TensorBase& t, Generator& gen);

}  // namespace kiln::cpu::detail
#endif  // KILN_KERNELS_CPU_DEVICE_RANDOM_H_
