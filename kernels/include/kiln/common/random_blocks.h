#ifndef KILN_KERNELS_COMMON_RANDOM_BLOCKS_H_
#define KILN_KERNELS_COMMON_RANDOM_BLOCKS_H_
// What one Philox block (4 x 32 bits) turns into, for uniform, normal, randint and bernoulli
// draws and randperm's keys: the CPU fill (kernels/cpu/random_fill.h) and the CUDA kernels
// (kernels/cuda/random.cu, randperm.cu) draw the same words from the same block indices, so
// `manual_seed(s); rand(...)` is bit-identical on both, and randn agrees to a few ulp (each
// side's logf/sinf/cosf: the CPU's vectorized libmvec ones, CUDA's).
#include <cmath>
#include <cstdint>
#include <type_traits>
#include "kiln/dtype.h"
#include "kiln/philox.h"

namespace kiln::random_detail {

// The Philox blocks of one request of n values, per_block values each: reserved on the
// generator under its lock, the same way for every device.
struct BlockRange {
  uint64_t seed = 0, first_block = 0;
  int64_t num_blocks = 0;
};
// Gen is kiln::Generator (kiln/generator.h); a parameter, so that this math needs no runtime header.
template <typename Gen>
BlockRange reserve_blocks(Gen& gen, int64_t n, int per_block) {
  BlockRange r;
  if (n <= 0) return r;
  r.num_blocks = (n + per_block - 1) / per_block;
  const auto start = gen.reserve(uint64_t(r.num_blocks) * 4);  // a GeneratorState
  r.seed = start.seed;
  r.first_block = start.offset / 4;
  return r;
}

// Mantissa bits of a uniform for storage type S: every draw is exact in S.
template <typename S>
inline constexpr int kUniformDigits = std::is_same_v<S, Half> ? 11 : std::is_same_v<S, BFloat16> ? 8 : 24;

// Values of S uniform on [from, to): from + u * (to - from) in S's compute type.
template <typename S>
struct UniformBlock {
  using C = opmath_t<S>;
  static constexpr int kPerBlock = std::is_same_v<S, double> ? 2 : 4;  // 53-bit draws take two words
  C lo, span, hi;
  UniformBlock(double from, double to) : lo(C(from)), span(C(to - from)), hi(C(to)) {}
  KILN_HOST_DEVICE S value(C u) const {
    S v = S(lo + u * span);
    // rounding may reach `to`; keep the range half-open (as PyTorch's CUDA kernel does)
    return C(v) >= hi && span > C(0) ? S(lo) : v;
  }
  // Writes count (<= kPerBlock) values drawn from block w to out (element `first` of the request).
  KILN_HOST_DEVICE void operator()(const philox::Block& w, S* out, int64_t /*first*/, int64_t count) const {
    if constexpr (std::is_same_v<S, double>) {
      for (int64_t j = 0; j < count; ++j) out[j] = value(philox::uniform53(w.x[2 * j], w.x[2 * j + 1]));
    } else {
      for (int64_t j = 0; j < count; ++j) out[j] = value(C(philox::uniform_bits<kUniformDigits<S>>(w.x[j])));
    }
  }
};

// Values of S normal(mean, std): Box-Muller pairs, 2 per block in float, 1 pair in double.
template <typename S>
struct NormalBlock {
  using C = opmath_t<S>;
  static constexpr int kPerBlock = std::is_same_v<S, double> ? 2 : 4;
  C mean, std;
  NormalBlock(double m, double s) : mean(C(m)), std(C(s)) {}
  KILN_HOST_DEVICE void operator()(const philox::Block& w, S* out, int64_t /*first*/, int64_t count) const {
    if constexpr (std::is_same_v<S, double>) {
      double z0, z1;
      philox::box_muller(1.0 - philox::uniform53(w.x[0], w.x[1]), philox::uniform53(w.x[2], w.x[3]), z0, z1);
      out[0] = mean + std * z0;
      if (count > 1) out[1] = mean + std * z1;
    } else {
      for (int64_t p = 0; 2 * p < count; ++p) {
        float z0, z1;
        philox::box_muller(1.0f - philox::uniform_bits<24>(w.x[2 * p]), philox::uniform_bits<24>(w.x[2 * p + 1]), z0, z1);
        out[2 * p] = S(mean + std * z0);
        if (2 * p + 1 < count) out[2 * p + 1] = S(mean + std * z1);
      }
    }
  }
};

// Integers uniform on [low, low + range) (range >= 1) stored as S: 32-bit draws while the range
// fits (4 per block), 64-bit draws beyond (kWide, 2 per block). The modulo bias is below
// range / 2^32 (resp. 2^64), as in PyTorch.
template <typename S, bool kWide>
struct RandintBlock {
  static constexpr int kPerBlock = kWide ? 2 : 4;
  int64_t low;
  uint64_t range;
  KILN_HOST_DEVICE void operator()(const philox::Block& w, S* out, int64_t /*first*/, int64_t count) const {
    for (int64_t j = 0; j < count; ++j) {
      uint64_t bits;
      if constexpr (kWide) bits = (uint64_t(w.x[2 * j + 1]) << 32) | w.x[2 * j];
      else bits = w.x[j];
      out[j] = S(int64_t(uint64_t(low) + bits % range));
    }
  }
};

// 1 with probability p[i], else 0, in p's dtype S: a 53-bit uniform per value for double, 24-bit
// otherwise, compared in double. A p outside [0, 1] (or NaN) gives NaN: callers check p first,
// this only keeps a value that escaped the check from looking like a draw.
template <typename S>
struct BernoulliBlock {
  static constexpr int kPerBlock = std::is_same_v<S, double> ? 2 : 4;
  const S* p;  // contiguous probabilities of the whole request
  KILN_HOST_DEVICE void operator()(const philox::Block& w, S* out, int64_t first, int64_t count) const {
    for (int64_t j = 0; j < count; ++j) {
      double u;
      if constexpr (std::is_same_v<S, double>) u = philox::uniform53(w.x[2 * j], w.x[2 * j + 1]);
      else u = double(philox::uniform_bits<24>(w.x[j]));
      const double pj = double(opmath_t<S>(p[first + j]));
      out[j] = pj >= 0.0 && pj <= 1.0 ? S(u < pj ? 1.0f : 0.0f) : S(NAN);
    }
  }
};

// 64 random bits per value: randperm's sort keys (indices sorted by key, ties by index).
struct PermKeyBlock {
  static constexpr int kPerBlock = 2;
  KILN_HOST_DEVICE void operator()(const philox::Block& w, uint64_t* out, int64_t /*first*/, int64_t count) const {
    for (int64_t j = 0; j < count; ++j) out[j] = (uint64_t(w.x[2 * j + 1]) << 32) | w.x[2 * j];
  }
};

// Block b of a request of n values: what the CPU loop's iteration b and CUDA thread b both write.
template <typename S, typename Body>
KILN_HOST_DEVICE void fill_block(S* out, int64_t n, const BlockRange& r, int64_t b, const Body& body) {
  const int64_t first = b * Body::kPerBlock;
  const int64_t count = n - first < Body::kPerBlock ? n - first : Body::kPerBlock;
  body(philox::block(r.seed, r.first_block + uint64_t(b)), out + first, first, count);
}

}  // namespace kiln::random_detail
#endif  // KILN_KERNELS_COMMON_RANDOM_BLOCKS_H_
