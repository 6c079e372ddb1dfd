#ifndef KILN_RUNTIME_SRC_RANDOM_FILL_H_
#define KILN_RUNTIME_SRC_RANDOM_FILL_H_
// CPU kernels of the random ops: each reserves whole Philox blocks on a Generator and fills
// a contiguous buffer in parallel. An element's value depends only on (seed, block index),
// never on which thread computed it. (Internal to runtime/src.)
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include "kernels/common/random_blocks.h"
#include "kiln/philox.h"
#include "kiln/random.h"

namespace kiln::random_detail {

inline constexpr int64_t kParallelGrain = 16384;  // elements per request worth forking threads

// Reserves ceil(n / E) blocks and calls fill(block, first_element, count) for each.
template <int E, typename Fill>
void for_each_block(Generator& gen, int64_t n, const Fill& fill) {
  const BlockRange r = reserve_blocks(gen, n, E);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t b = 0; b < r.num_blocks; ++b) {
    const philox::Block w = philox::block(r.seed, r.first_block + uint64_t(b));
    fill(w, b * E, std::min<int64_t>(E, n - b * E));
  }
}

// n values of S from the per-block functor body (random_blocks.h), blocks in parallel.
template <typename S, typename Body>
void fill_blocks(S* out, int64_t n, const Body& body, Generator& gen) {
  const BlockRange r = reserve_blocks(gen, n, Body::kPerBlock);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
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

// n integers uniform on [low, low + range) (range >= 1), as int64: 32-bit draws while the
// range fits (4 per block), 64-bit draws beyond (2 per block). The modulo bias is below
// range / 2^32 (resp. 2^64), as in PyTorch.
template <typename Store>
void fill_randint(int64_t n, int64_t low, uint64_t range, Generator& gen, const Store& store) {
  if (range <= (uint64_t(1) << 32)) {
    for_each_block<4>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      for (int64_t j = 0; j < count; ++j) store(first + j, int64_t(uint64_t(low) + w.x[j] % range));
    });
  } else {
    for_each_block<2>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      for (int64_t j = 0; j < count; ++j) {
        uint64_t bits = (uint64_t(w.x[2 * j + 1]) << 32) | w.x[2 * j];
        store(first + j, int64_t(uint64_t(low) + bits % range));
      }
    });
  }
}

}  // namespace kiln::random_detail
#endif  // KILN_RUNTIME_SRC_RANDOM_FILL_H_
