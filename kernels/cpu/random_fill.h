#ifndef KILN_KERNELS_CPU_RANDOM_FILL_H_
#define KILN_KERNELS_CPU_RANDOM_FILL_H_
// CPU kernels of the random ops: each reserves whole Philox blocks on a Generator and fills
// a contiguous buffer in parallel. An element's value depends only on (seed, block index),
// never on which thread computed it. (Internal to kernels/cpu: random.cpp.)
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include "kiln/common/math_simd.h"
#include "kiln/common/random_blocks.h"
#include "kiln/cpu/parallel.h"
#include "kiln/cpu/philox_words.h"
#include "kiln/generator.h"
#include "kiln/philox.h"

namespace kiln::random_detail {

// n values of S from the per-block functor body (random_blocks.h), blocks in parallel.
template <typename S, typename Body>
void fill_blocks(S* out, int64_t n, const Body& body, Generator& gen) {
  const BlockRange r = reserve_blocks(gen, n, Body::kPerBlock);
#pragma omp parallel for schedule(static) if (n >= cpu::kParallelGrain)
  for (int64_t b = 0; b < r.num_blocks; ++b) fill_block(out, n, r, b, body);
}
// The Philox words of blocks b0 .. b0 + nb - 1 of r (nb <= kChunkBlocks), drawn side by side.
constexpr int64_t kChunkBlocks = 64;  // 256 draws: the buffers stay in L1
inline void philox_chunk(const BlockRange& r, int64_t b0, int64_t nb, uint32_t (&words)[4][kChunkBlocks]) {
  cpu::philox_words(r.seed, r.first_block + uint64_t(b0), nb, words);
}

// Uniform draws stored as float, Half or BFloat16, a chunk of blocks at a time: the Philox
// words first, then the conversion in a loop the compiler vectorizes. Same values, same
// elements as UniformBlock<S>.
template <typename S>
void fill_uniform_float_chunks(S* out, int64_t n, double from, double to, Generator& gen) {
  const UniformBlock<S> body(from, to);
  const BlockRange r = reserve_blocks(gen, n, UniformBlock<S>::kPerBlock);
  const int64_t chunks = (r.num_blocks + kChunkBlocks - 1) / kChunkBlocks;
#pragma omp parallel for schedule(static) if (n >= cpu::kParallelGrain)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t words[4][kChunkBlocks];
    const int64_t b0 = c * kChunkBlocks, nb = std::min(kChunkBlocks, r.num_blocks - b0);
    philox_chunk(r, b0, nb, words);
    const int64_t first = b0 * 4, count = std::min<int64_t>(4 * nb, n - first);
    S* dst = out + first;
#pragma omp simd
    for (int64_t i = 0; i < count; ++i)
      dst[i] = body.value(float(philox::uniform_bits<kUniformDigits<S>>(words[i & 3][i >> 2])));
  }
}

template <typename S>
void fill_uniform(S* out, int64_t n, double from, double to, Generator& gen) {
  if constexpr (std::is_same_v<opmath_t<S>, float>) fill_uniform_float_chunks(out, n, from, to, gen);
  else fill_blocks(out, n, UniformBlock<S>(from, to), gen);
}
// Normal draws stored as float, Half or BFloat16: the Philox words of a chunk of blocks first,
// then Box-Muller over the chunk in one `omp simd` loop, which calls libmvec's vector
// logf/sinf/cosf (kiln/common/math_simd.h) instead of one scalar call per draw. The same pairs
// land in the same elements as NormalBlock<S> (the CUDA kernel's), equal to a few ulp.
template <typename S>
void fill_normal_float_chunks(S* out, int64_t n, float mean, float std, Generator& gen) {
  const BlockRange r = reserve_blocks(gen, n, NormalBlock<S>::kPerBlock);
  const int64_t chunks = (r.num_blocks + kChunkBlocks - 1) / kChunkBlocks;
#pragma omp parallel for schedule(static) if (n >= cpu::kParallelGrain)
  for (int64_t c = 0; c < chunks; ++c) {
    alignas(64) uint32_t words[4][kChunkBlocks];
    alignas(64) float u1[2 * kChunkBlocks], u2[2 * kChunkBlocks], z0[2 * kChunkBlocks], z1[2 * kChunkBlocks];
    const int64_t b0 = c * kChunkBlocks, nb = std::min(kChunkBlocks, r.num_blocks - b0), pairs = 2 * nb;
    philox_chunk(r, b0, nb, words);
    // pair p of block b: (word 2p, word 2p + 1)
    for (int64_t b = 0; b < nb; ++b) {
      for (int p = 0; p < 2; ++p) {
        u1[2 * b + p] = 1.0f - philox::uniform_bits<24>(words[2 * p][b]);
        u2[2 * b + p] = philox::uniform_bits<24>(words[2 * p + 1][b]);
      }
    }
    // separate loops: in one, GCC fuses sin and cos into a scalar sincosf call per draw
#pragma omp simd
    for (int64_t k = 0; k < pairs; ++k) {
      u1[k] = std::sqrt(-2.0f * std::log(u1[k]));          // the radius
      u2[k] = 6.283185307179586476925f * u2[k];            // the angle
    }
#pragma omp simd
    for (int64_t k = 0; k < pairs; ++k) z0[k] = mean + std * (u1[k] * std::cos(u2[k]));
#pragma omp simd
    for (int64_t k = 0; k < pairs; ++k) z1[k] = mean + std * (u1[k] * std::sin(u2[k]));
    const int64_t first = b0 * NormalBlock<S>::kPerBlock;
    const int64_t count = std::min<int64_t>(nb * NormalBlock<S>::kPerBlock, n - first);
    for (int64_t i = 0; i < count; ++i) out[first + i] = S((i & 1) ? z1[i >> 1] : z0[i >> 1]);
  }
}

template <typename S>
void fill_normal(S* out, int64_t n, double mean, double std, Generator& gen) {
  if constexpr (std::is_same_v<opmath_t<S>, float>) fill_normal_float_chunks(out, n, float(mean), float(std), gen);
  else fill_blocks(out, n, NormalBlock<S>(mean, std), gen);
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
#endif  // KILN_KERNELS_CPU_RANDOM_FILL_H_
