#ifndef KILN_RUNTIME_SRC_RANDOM_FILL_H_
#define KILN_RUNTIME_SRC_RANDOM_FILL_H_
// CPU kernels of the random ops: each reserves whole Philox blocks on a Generator and fills
// a contiguous buffer in parallel. An element's value depends only on (seed, block index),
// never on which thread computed it. (Internal to runtime/src.)
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include "kiln/philox.h"
#include "kiln/random.h"

namespace kiln::random_detail {

inline constexpr int64_t kParallelGrain = 16384;  // elements per request worth forking threads

// Reserves ceil(n / E) blocks and calls fill(block, first_element, count) for each.
template <int E, typename Fill>
void for_each_block(Generator& gen, int64_t n, const Fill& fill) {
  if (n <= 0) return;
  const int64_t num_blocks = (n + E - 1) / E;
  const GeneratorState start = gen.reserve(uint64_t(num_blocks) * 4);
  const uint64_t base = start.offset / 4;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t b = 0; b < num_blocks; ++b) {
    const philox::Block w = philox::block(start.seed, base + uint64_t(b));
    fill(w, b * E, std::min<int64_t>(E, n - b * E));
  }
}

// Mantissa bits of a uniform for storage type S: every draw is exact in S.
template <typename S>
inline constexpr int kUniformDigits = std::is_same_v<S, Half> ? 11 : std::is_same_v<S, BFloat16> ? 8 : 24;

// n values of S uniform on [from, to): from + u * (to - from) in S's compute type.
template <typename S>
void fill_uniform(S* out, int64_t n, double from, double to, Generator& gen) {
  using C = opmath_t<S>;
  const C lo = C(from), span = C(to - from), hi = C(to);
  auto value = [lo, span, hi](C u) {
    S v = S(lo + u * span);
    // rounding may reach `to`; keep the range half-open (as PyTorch's CUDA kernel does)
    return C(v) >= hi && span > C(0) ? S(lo) : v;
  };
  if constexpr (std::is_same_v<S, double>) {
    for_each_block<2>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      for (int64_t j = 0; j < count; ++j) out[first + j] = value(philox::uniform53(w.x[2 * j], w.x[2 * j + 1]));
    });
  } else {
    for_each_block<4>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      for (int64_t j = 0; j < count; ++j) out[first + j] = value(C(philox::uniform_bits<kUniformDigits<S>>(w.x[j])));
    });
  }
}

// n values of S normal(mean, std): Box-Muller pairs, 2 per block in float, 1 in double.
template <typename S>
void fill_normal(S* out, int64_t n, double mean, double std, Generator& gen) {
  using C = opmath_t<S>;
  const C m = C(mean), s = C(std);
  if constexpr (std::is_same_v<S, double>) {
    for_each_block<2>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      double z0, z1;
      philox::box_muller(1.0 - philox::uniform53(w.x[0], w.x[1]), philox::uniform53(w.x[2], w.x[3]), z0, z1);
      out[first] = m + s * z0;
      if (count > 1) out[first + 1] = m + s * z1;
    });
  } else {
    for_each_block<4>(gen, n, [&](const philox::Block& w, int64_t first, int64_t count) {
      for (int64_t p = 0; 2 * p < count; ++p) {
        float z0, z1;
        philox::box_muller(1.0f - philox::uniform_bits<24>(w.x[2 * p]), philox::uniform_bits<24>(w.x[2 * p + 1]), z0, z1);
        out[first + 2 * p] = S(m + s * z0);
        if (2 * p + 1 < count) out[first + 2 * p + 1] = S(m + s * z1);
      }
    });
  }
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
