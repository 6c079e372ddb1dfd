#ifndef KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
#define KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
// Random numbers: a counter-based generator (Philox4x32-10, see kiln/philox.h). The random
// ops that draw from it (rand, randn, randint, randperm, bernoulli, normal, uniform_, normal_,
// ...) are in ops/random.yaml; their declarations come with this header.
//
// A Generator is (seed, offset): `offset` counts the 32-bit values consumed so far and is a
// multiple of 4. A request reserves its values under a mutex, then generates them in
// parallel: element i reads Philox block offset/4 + i / (elements per block), so results do
// not depend on the thread count (or, later, on CUDA's launch shape). Per block (4 words):
// 4 elements of float32/float16/bfloat16 uniforms, bernoulli draws and randint with a range
// up to 2^32, 2 elements of float64 or of 64-bit draws; normals come in Box-Muller pairs
// (2 pairs per block in float, 1 in double). Complex tensors fill their real and imaginary
// parts as 2n reals.
#include "kiln/generator.h"
#include "kiln/tensor.h"

#endif  // KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
