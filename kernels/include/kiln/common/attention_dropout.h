#ifndef KILN_KERNELS_COMMON_ATTENTION_DROPOUT_H_
#define KILN_KERNELS_COMMON_ATTENTION_DROPOUT_H_
// Dropout inside the fused attention, shared by the CPU and CUDA kernels (kernels/cpu/attention.cpp,
// kernels/cuda/attention.cu) and tested on the host (tests/test_attention_dropout.cpp).
//
// Probability (b, i, j) of the [B, L, S] matrix is element n = (b * L + i) * S + j of the draw that
// dropout(softmax(scores), p) makes from the same generator state: rand's float32 uniform from word
// n % 4 of Philox block first_block + n / 4, kept when below 1 - p (in float32, as lt(rand, 1 - p)
// compares in kiln::dropout_keep_mask, the runtime's rule) and scaled by 1 / (1 - p). So the fused
// kernel drops exactly what the composed math drops, its backward redraws the same mask from
// (seed, offset), and CPU and CUDA agree.
#include <cstdint>
#include "kiln/macros.h"
#include "kiln/philox.h"

namespace kiln::attention {

struct Dropout {
  uint64_t seed = 0, first_block = 0;
  float keep_below = 1.0f;  // 1 - p: a draw below it is kept (none when p == 1)
  double scale = 1.0;       // 1 / (1 - p), applied where kept
  bool active = false;      // p > 0

  // offset: the generator state's offset in 32-bit words (a multiple of 4) where the draw starts.
  static Dropout make(double p, uint64_t seed, uint64_t offset) {
    Dropout d;
    if (!(p > 0)) return d;
    d.active = true;
    d.seed = seed;
    d.first_block = offset / 4;
    d.keep_below = float(1.0 - p);
    d.scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
    return d;
  }

  KILN_HOST_DEVICE bool keep(uint64_t n) const {
    const philox::Block w = philox::block(seed, first_block + n / 4);
    return philox::uniform_bits<24>(w.x[n % 4]) < keep_below;
  }
  // What probability n is multiplied by: 1 / (1 - p) where kept, 0 where dropped (1 without dropout).
  template <typename C>
  KILN_HOST_DEVICE C factor(uint64_t n) const {
    return !active ? C(1) : keep(n) ? C(scale) : C(0);
  }
};

}  // namespace kiln::attention
#endif  // KILN_KERNELS_COMMON_ATTENTION_DROPOUT_H_
