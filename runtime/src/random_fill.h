#ifndef KILN_RUNTIME_SRC_RANDOM_FILL_H_
#define KILN_RUNTIME_SRC_RANDOM_FILL_H_
// CPU kernels of the random ops: each reserves whole Philox blocks on a Generator and fills
// a contiguous buffer in parallel. An element's value depends only on (seed, block index),
// never on which thread computed it. (Internal to runtime/src.)
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include "kiln/common/random_blocks.h"
#include "kiln/cpu/parallel.h"
#include "kiln/philox.h"
#include "kiln/random.h"

namespace kiln::random_detail {

// n values of S from the per-block functor body (random_blocks.h), blocks in parallel.
template <typename S, typename Body>
void fill_blocks(S* out, int64_t n, const Body& body, Generator& gen) {
  const BlockRange r = reserve_blocks(gen, n, Body::kPerBlock);
#pragma omp parallel for schedule(static) if (n >= cpu::kParallelGrain)
  for (int64_t b = 0; b < r.num_blocks; ++b) fill_block(out, n, r, b, body);
}
template <typename S>
void fill_uniform(S* out, int64_t n, double from, double to, Generator& gen) {
  fill_blocks(out, n, UniformBlock<S>(from, to), gen);
}
template <typename S>
void fill_normal(S* out, int64_t n, double mean, double std, Generator& gen) {
  fill_blocks(out, n, NormalBlock<S>(mean, std), gen);
}

// n integers uniform on [low, low + range), range >= 1 (RandintBlock), stored as S.
template <typename S>
void fill_randint(S* out, int64_t n, int64_t low, uint64_t range, Generator& gen) {
  if (range <= (uint64_t(1) << 32)) fill_blocks(out, n, RandintBlock<S, false>{low, range}, gen);
  else fill_blocks(out, n, RandintBlock<S, true>{low, range}, gen);
}

// n draws of 1 with probability p[i] (BernoulliBlock), in p's type.
template <typename S>
void fill_bernoulli(S* out, const S* p, int64_t n, Generator& gen) {
  fill_blocks(out, n, BernoulliBlock<S>{p}, gen);
}

}  // namespace kiln::random_detail
#endif  // KILN_RUNTIME_SRC_RANDOM_FILL_H_
