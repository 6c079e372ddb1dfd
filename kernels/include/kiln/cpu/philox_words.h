#ifndef KILN_KERNELS_INCLUDE_KILN_CPU_PHILOX_WORDS_H_
#define KILN_KERNELS_INCLUDE_KILN_CPU_PHILOX_WORDS_H_
// Philox blocks drawn side by side on the CPU: the random fills (kernels/cpu/random_fill.h) and
// the fused attention's dropout (kernels/cpu/attention.cpp) read their words this way.
#include <cstdint>
#include "kiln/philox.h"

namespace kiln::cpu {

// words[j][b] = word j of Philox block first + b, for b < nb (nb <= kCap). The ten rounds of every
// block run side by side, which the compiler vectorizes (32 x 32 -> 64-bit multiplies are one
// SIMD instruction per 4 or 8 lanes).
template <int64_t kCap>
inline void philox_words(uint64_t seed, uint64_t first, int64_t nb, uint32_t (&words)[4][kCap]) {
#pragma omp simd
  for (int64_t b = 0; b < nb; ++b) {
    const philox::Block w = philox::block(seed, first + uint64_t(b));
    words[0][b] = w.x[0], words[1][b] = w.x[1], words[2][b] = w.x[2], words[3][b] = w.x[3];
  }
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_INCLUDE_KILN_CPU_PHILOX_WORDS_H_
