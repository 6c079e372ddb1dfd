#ifndef KILN_KERNELS_COMMON_FLASH_ATTENTION_TILES_H_
#define KILN_KERNELS_COMMON_FLASH_ATTENTION_TILES_H_
// The shared-memory plan of the CUDA flash-attention kernels (kernels/cuda/flash_attention.cu),
// plain arithmetic kept here so the CPU test suite checks it (tests/test_flash_attention_tiles.cpp):
// every tile 128-byte aligned, every WMMA fragment's rows 32-byte aligned with a leading dimension
// WMMA accepts, and the bytes a block asks for.
#include <cstddef>
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::flash_tiles {

constexpr int kWarps = 4, kThreads = 32 * kWarps;
constexpr int kTile = 64;      // query rows per block, keys per tile; 16 rows per warp
constexpr int kMaxHead = 128;  // the widest E or Ev the tiles hold
constexpr int kPadHalf = 8;    // 16-bit tile rows are padded by 8 elements, float rows by 4: it
constexpr int kPadFloat = 4;   // spreads shared-memory banks and keeps WMMA's 32-byte alignment
constexpr size_t kHalf = 2;    // float16 and bfloat16 alike

// Tile widths (E and Ev rounded up to WMMA's 16) and each kind of tile's row pitch in elements.
struct Pitch {
  int ep = 0, evp = 0;
  KILN_HOST_DEVICE int qk() const { return ep + kPadHalf; }     // 16-bit rows of E: Q, K
  KILN_HOST_DEVICE int vo() const { return evp + kPadHalf; }    // 16-bit rows of Ev: V, dO
  KILN_HOST_DEVICE int sq() const { return kTile + kPadFloat; }  // float32 rows of 64 scores
  KILN_HOST_DEVICE int pr() const { return kTile + kPadHalf; }   // 16-bit rows of 64 probabilities
  KILN_HOST_DEVICE int ae() const { return ep + kPadFloat; }     // float32 accumulator rows of E
  KILN_HOST_DEVICE int av() const { return evp + kPadFloat; }    // float32 accumulator rows of Ev
};

inline Pitch pitch_of(int64_t E, int64_t Ev) { return {int((E + 15) / 16 * 16), int((Ev + 15) / 16 * 16)}; }

// Tiles carved one after another from one dynamic shared-memory buffer, each 128-byte aligned.
struct Carve {
  size_t bytes = 0;
  size_t take(size_t count, size_t element) {
    const size_t at = bytes;
    bytes = (bytes + count * element + 127) / 128 * 128;
    return at;
  }
};

// The forward: Q, K, V tiles, the scores (float32), P (16-bit), the output accumulator (float32)
// and each row's running maximum and sum.
struct ForwardLayout {
  Pitch w;
  size_t q, k, v, s, p, o, m, l, bytes;
};

inline ForwardLayout forward_layout(int64_t E, int64_t Ev) {
  ForwardLayout f;
  f.w = pitch_of(E, Ev);
  Carve c;
  f.q = c.take(kTile * f.w.qk(), kHalf);
  f.k = c.take(kTile * f.w.qk(), kHalf);
  f.v = c.take(kTile * f.w.vo(), kHalf);
  f.s = c.take(kTile * f.w.sq(), 4);
  f.p = c.take(kTile * f.w.pr(), kHalf);
  f.o = c.take(kTile * f.w.av(), 4);
  f.m = c.take(kTile, 4);
  f.l = c.take(kTile, 4);
  f.bytes = c.bytes;
  return f;
}

// Both backward kernels: Q and dO tiles, K and V tiles, scores and dP (float32), P times the
// dropout factor and dS (16-bit, for the products), the accumulators (dK or dQ of E, dV of Ev),
// and the query rows' logsumexp and delta.
struct BackwardLayout {
  Pitch w;
  size_t q, dout, k, v, s, dp, p, ds, acc_e, acc_v, lse, delta, bytes;
};

inline BackwardLayout backward_layout(int64_t E, int64_t Ev) {
  BackwardLayout b;
  b.w = pitch_of(E, Ev);
  Carve c;
  b.q = c.take(kTile * b.w.qk(), kHalf);
  b.dout = c.take(kTile * b.w.vo(), kHalf);
  b.k = c.take(kTile * b.w.qk(), kHalf);
  b.v = c.take(kTile * b.w.vo(), kHalf);
  b.s = c.take(kTile * b.w.sq(), 4);
  b.dp = c.take(kTile * b.w.sq(), 4);
  b.p = c.take(kTile * b.w.pr(), kHalf);
  b.ds = c.take(kTile * b.w.pr(), kHalf);
  b.acc_e = c.take(kTile * b.w.ae(), 4);
  b.acc_v = c.take(kTile * b.w.av(), 4);
  b.lse = c.take(kTile, 4);
  b.delta = c.take(kTile, 4);
  b.bytes = c.bytes;
  return b;
}

// Whether the tiles take head sizes E and Ev in `limit` bytes of shared memory per block.
inline bool fits(int64_t E, int64_t Ev, size_t layout_bytes, size_t limit) {
  return E >= 1 && Ev >= 1 && E <= kMaxHead && Ev <= kMaxHead && layout_bytes <= limit;
}

}  // namespace kiln::flash_tiles
#endif  // KILN_KERNELS_COMMON_FLASH_ATTENTION_TILES_H_
