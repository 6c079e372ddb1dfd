// The walks of the CPU loops (kiln/cpu/loops.h), compiled once: they depend on the geometry and
// the element sizes, never on an op or a dtype, whose loops they call through pointers.
#include <algorithm>
#include <vector>
#include "kiln/cpu/loops.h"

namespace kiln::cpu {
namespace {

template <typename E>
void gather_tile(char* dst, const char* src, int64_t rows, int64_t cols, int64_t stride_r, int64_t stride_c) {
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r)
      d[r * kTileCols + c] = *reinterpret_cast<const E*>(src + r * stride_r + c * stride_c);
}

// Copies a rows x cols block whose elements are `sc` bytes apart along a row and `sr` apart
// down a column into dst (row-major, kTileCols elements of `elem` bytes per row), walking each
// column so the source is read along its contiguous direction.
void gather_tile_bytes(size_t elem, char* dst, const char* src, int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  struct alignas(16) E16 {
    char b[16];
  };
  switch (elem) {
    case 1:
      gather_tile<uint8_t>(dst, src, rows, cols, sr, sc);
      break;
    case 2:
      gather_tile<uint16_t>(dst, src, rows, cols, sr, sc);
      break;
    case 4:
      gather_tile<uint32_t>(dst, src, rows, cols, sr, sc);
      break;
    case 8:
      gather_tile<uint64_t>(dst, src, rows, cols, sr, sc);
      break;
    default:
      gather_tile<E16>(dst, src, rows, cols, sr, sc);
      break;
  }
}

// Calls body(ptrs, strides_bytes, count) for each row (dim 1) of each tile. Inputs that run
// across dim 0 (a transposed input) are first copied into a dense per-tile buffer, so every row
// the body sees is unit-stride or broadcast and takes the vectorized loops. elem[k]: operand
// k's size.
template <typename Body>
void for_each_tile_row(const StridedGeometry& g, int n, const size_t* elem, Body&& body) {
  bool staged[5] = {false};
  for (int k = 1; k < n; ++k) staged[k] = g.strides[k][0] != 0 && g.strides[k][0] != int64_t(elem[k]);
  constexpr size_t kBufferBytes = size_t(kTileRows * kTileCols) * 16;  // any element type
  for_each_tile(g, n, kTileCols, kTileRows, [&](char** p, int64_t rows, int64_t cols) {
    thread_local std::vector<char> scratch;
    if (scratch.size() < 4 * kBufferBytes) scratch.resize(4 * kBufferBytes);
    int64_t inner[5];
    char* buffer[5] = {nullptr};
    for (int k = 0; k < n; ++k) {
      inner[k] = g.strides[k][0];
      if (staged[k]) {
        buffer[k] = scratch.data() + size_t(k - 1) * kBufferBytes;
        gather_tile_bytes(elem[k], buffer[k], p[k], rows, cols, g.strides[k][1], g.strides[k][0]);
        inner[k] = int64_t(elem[k]);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      char* q[5] = {};  // only the first n are used; zeroed so GCC can see that
      for (int k = 0; k < n; ++k)
        q[k] = staged[k] ? buffer[k] + r * kTileCols * int64_t(elem[k]) : p[k] + r * g.strides[k][1];
      body(q, inner, cols);
    }
  });
}

}  // namespace

void visit_tiles(const StridedGeometry& g, int n, int64_t tile0, int64_t tile1, TileBody body) {
  const int64_t s0 = g.sizes[0], s1 = g.sizes[1];
  const int64_t t0 = (s0 + tile0 - 1) / tile0, t1 = (s1 + tile1 - 1) / tile1;
  const int64_t ntiles = g.numel / (s0 * s1) * t0 * t1;
  auto tile = [&](int64_t t) {
    int64_t j = t % t0, i = (t / t0) % t1, rem = t / (t0 * t1);
    char* p[5] = {};
    for (int k = 0; k < n; ++k) p[k] = g.base[k];
    for (int d = 2; d < g.ndim; ++d) {
      int64_t idx = rem % g.sizes[d];
      rem /= g.sizes[d];
      for (int k = 0; k < n; ++k) p[k] += idx * g.strides[k][d];
    }
    const int64_t j0 = j * tile0, i0 = i * tile1;
    for (int k = 0; k < n; ++k) p[k] += i0 * g.strides[k][1] + j0 * g.strides[k][0];
    body.call(body.fn, p, std::min(tile1, s1 - i0), std::min(tile0, s0 - j0));
  };
  kiln::detail::parallel_items(ntiles, g.numel / ntiles, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) tile(t);
  });
}

void walk_strided(const StridedGeometry& g, int n, const size_t* elem, const LoopBodies& bodies) {
  if (!g.contiguous && wants_tiles(g, n)) {
    for_each_tile_row(g, n, elem,
                      [&](char** p, const int64_t* s, int64_t count) { bodies.any(bodies.fn, p, s, count); });
    return;
  }
  kiln::detail::parallel_range(g.numel, [&](int64_t b, int64_t e) {
    if (g.contiguous) {
      char* p[5];
      for (int k = 0; k < n; ++k) p[k] = g.base[k] + b * int64_t(elem[k]);
      bodies.dense(bodies.fn, p, e - b);
    } else {
      for_each_run(g, n, b, e, [&](char** p, const int64_t* s, int64_t count) { bodies.any(bodies.fn, p, s, count); });
    }
  });
}

}  // namespace kiln::cpu
