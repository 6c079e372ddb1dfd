// The shared-memory plan of the CUDA flash-attention kernels (kiln/common/flash_attention_tiles.h),
// checked on the host: WMMA loads and stores need 32-byte aligned rows and a leading dimension
// that is a multiple of 8 (16-bit) or 4 (float32) elements, and a block may not ask for more
// shared memory than the device lets it opt into.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>
#include "kiln/common/flash_attention_tiles.h"

using namespace kiln::flash_tiles;

namespace {

constexpr size_t kH100OptIn = 232448;  // 227 KiB per block on sm_90
constexpr size_t kA100OptIn = 166912;  // 163 KiB per block on sm_80

// Every 16-row warp slice and every 16-column step of a tile at `base` with row pitch `ld`
// elements of `element` bytes starts 32-byte aligned.
bool fragments_aligned(size_t base, int ld, size_t element, int columns) {
  if (base % 128 != 0) return false;
  for (int row = 0; row < kTile; row += 16)
    for (int col = 0; col < columns; col += 16)
      if ((base + (size_t(row) * ld + col) * element) % 32 != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("flash attention tiles: head sizes round up to WMMA's 16 and pitches suit WMMA") {
  for (int64_t e : {1, 15, 16, 17, 40, 64, 100, 128}) {
    const Pitch w = pitch_of(e, e);
    CHECK(w.ep % 16 == 0);
    CHECK(w.ep >= e);
    CHECK(w.ep - e < 16);
    for (int ld : {w.qk(), w.vo(), w.pr()}) CHECK(ld % 8 == 0);
    for (int ld : {w.sq(), w.ae(), w.av()}) CHECK(ld % 4 == 0);
  }
  CHECK(pitch_of(40, 24).ep == 48);
  CHECK(pitch_of(40, 24).evp == 32);
}

TEST_CASE("flash attention tiles: every fragment the kernels load or store is 32-byte aligned") {
  for (int64_t e = 1; e <= kMaxHead; ++e)
    for (int64_t ev : {int64_t(1), int64_t(16), e, int64_t(kMaxHead)}) {
      INFO("E " << e << " Ev " << ev);
      const ForwardLayout f = forward_layout(e, ev);
      CHECK(fragments_aligned(f.q, f.w.qk(), 2, f.w.ep));
      CHECK(fragments_aligned(f.k, f.w.qk(), 2, f.w.ep));
      CHECK(fragments_aligned(f.v, f.w.vo(), 2, f.w.evp));
      CHECK(fragments_aligned(f.s, f.w.sq(), 4, kTile));
      CHECK(fragments_aligned(f.p, f.w.pr(), 2, kTile));
      CHECK(fragments_aligned(f.o, f.w.av(), 4, f.w.evp));
      CHECK(f.l + kTile * 4 <= f.bytes);
      const BackwardLayout b = backward_layout(e, ev);
      CHECK(fragments_aligned(b.q, b.w.qk(), 2, b.w.ep));
      CHECK(fragments_aligned(b.dout, b.w.vo(), 2, b.w.evp));
      CHECK(fragments_aligned(b.k, b.w.qk(), 2, b.w.ep));
      CHECK(fragments_aligned(b.v, b.w.vo(), 2, b.w.evp));
      CHECK(fragments_aligned(b.s, b.w.sq(), 4, kTile));
      CHECK(fragments_aligned(b.dp, b.w.sq(), 4, kTile));
      CHECK(fragments_aligned(b.p, b.w.pr(), 2, kTile));
      CHECK(fragments_aligned(b.ds, b.w.pr(), 2, kTile));
      CHECK(fragments_aligned(b.acc_e, b.w.ae(), 4, b.w.ep));
      CHECK(fragments_aligned(b.acc_v, b.w.av(), 4, b.w.evp));
      CHECK(b.delta + kTile * 4 <= b.bytes);
    }
}

TEST_CASE("flash attention tiles: the tiles do not overlap") {
  const ForwardLayout f = forward_layout(40, 24);
  const std::vector<size_t> starts = {f.q, f.k, f.v, f.s, f.p, f.o, f.m, f.l, f.bytes};
  const std::vector<size_t> sizes = {size_t(kTile) * f.w.qk() * 2, size_t(kTile) * f.w.qk() * 2,
                                     size_t(kTile) * f.w.vo() * 2, size_t(kTile) * f.w.sq() * 4,
                                     size_t(kTile) * f.w.pr() * 2, size_t(kTile) * f.w.av() * 4,
                                     size_t(kTile) * 4,            size_t(kTile) * 4};
  for (size_t i = 0; i < sizes.size(); ++i) CHECK(starts[i] + sizes[i] <= starts[i + 1]);
}

TEST_CASE("flash attention tiles: which head sizes fit an H100/H200 and an A100") {
  // head size 128: forward 110.5 KiB and backward 186.5 KiB, within sm_90's 227 KiB;
  // the backward is past sm_80's 163 KiB, so an A100 takes the float32 chunks there
  CHECK(forward_layout(128, 128).bytes == 113152);
  CHECK(backward_layout(128, 128).bytes == 190976);
  CHECK(fits(128, 128, forward_layout(128, 128).bytes, kH100OptIn));
  CHECK(fits(128, 128, backward_layout(128, 128).bytes, kH100OptIn));
  CHECK(fits(128, 128, forward_layout(128, 128).bytes, kA100OptIn));
  CHECK_FALSE(fits(128, 128, backward_layout(128, 128).bytes, kA100OptIn));
  CHECK(fits(64, 64, backward_layout(64, 64).bytes, kA100OptIn));
  // past 128, or an empty head, the kernels do not apply whatever the memory
  CHECK_FALSE(fits(129, 64, 0, kH100OptIn));
  CHECK_FALSE(fits(64, 129, 0, kH100OptIn));
  CHECK_FALSE(fits(0, 64, 0, kH100OptIn));
}
