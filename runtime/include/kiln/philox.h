#ifndef KILN_RUNTIME_INCLUDE_KILN_PHILOX_H_
#define KILN_RUNTIME_INCLUDE_KILN_PHILOX_H_
// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11) and
// the bit-to-number conversions kiln's random ops use. Everything is a pure function of
// (seed, block index), host and device, so a CUDA kernel reproduces the CPU's numbers
// whatever the thread layout.
#include <cstdint>
#include <cmath>
#include "kiln/macros.h"

namespace kiln::philox {

struct Block {
  uint32_t x[4];
};

KILN_HOST_DEVICE inline Block philox4x32_10(Block ctr, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * ctr.x[0], p1 = uint64_t(kM1) * ctr.x[2];
    ctr = Block{{uint32_t(p1 >> 32) ^ ctr.x[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ ctr.x[3] ^ k1, uint32_t(p0)}};
  }
  return ctr;
}

// Block `index` of the stream keyed by `seed`: counter (index lo, index hi, 0, 0),
// key (seed lo, seed hi). Counter words 2 and 3 stay free for future sub-streams.
KILN_HOST_DEVICE inline Block block(uint64_t seed, uint64_t index) {
  return philox4x32_10(Block{{uint32_t(index), uint32_t(index >> 32), 0u, 0u}}, uint32_t(seed), uint32_t(seed >> 32));
}

// Uniform [0, 1) numbers with exactly `digits` random bits, so every value is representable
// in the target type and 1.0 never appears: float 24, float16 11, bfloat16 8, double 53.
template <int Digits>
KILN_HOST_DEVICE inline float uniform_bits(uint32_t w) {
  static_assert(Digits >= 1 && Digits <= 24, "a float holds at most 24 bits");
  return float(w >> (32 - Digits)) * (1.0f / float(1u << Digits));
}
KILN_HOST_DEVICE inline double uniform53(uint32_t lo, uint32_t hi) {
  return double(((uint64_t(hi) << 32) | lo) >> 11) * 0x1p-53;
}

// Box-Muller: two independent standard normals from u1 in (0, 1] and u2 in [0, 1).
template <typename T>
KILN_HOST_DEVICE inline void box_muller(T u1, T u2, T& z0, T& z1) {
  const T r = std::sqrt(T(-2) * std::log(u1));
  const T theta = T(6.283185307179586476925) * u2;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

}  // namespace kiln::philox
#endif  // KILN_RUNTIME_INCLUDE_KILN_PHILOX_H_
