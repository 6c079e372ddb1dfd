#ifndef KILN_KERNELS_COMMON_TRI_INDICES_H_
#define KILN_KERNELS_COMMON_TRI_INDICES_H_
// Where each row's entries start in tril_indices / triu_indices, in closed form, so the meta
// step sizes the result and every CUDA thread finds its row's place without a scan.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::tri {

KILN_HOST_DEVICE KILN_INLINE int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// tril: row i keeps columns [0, clamp(i + offset + 1, 0, col))
KILN_HOST_DEVICE KILN_INLINE int64_t tril_row_count(int64_t i, int64_t col, int64_t offset) {
  return clamp(i + offset + 1, 0, col);
}

// sum of tril_row_count over rows [0, r): zeros, then a ramp i + a, then full rows of col
KILN_HOST_DEVICE KILN_INLINE int64_t tril_row_start(int64_t r, int64_t col, int64_t offset) {
  const int64_t a = offset + 1;
  const int64_t ramp_begin = clamp(-a, 0, r), ramp_end = clamp(col - a, ramp_begin, r);
  const int64_t n = ramp_end - ramp_begin;
  const int64_t first = ramp_begin + a, last = ramp_end - 1 + a;
  return (n > 0 ? (first + last) * n / 2 : 0) + (r - ramp_end) * col;
}

// triu: row i keeps columns [clamp(i + offset, 0, col), col), the complement of tril at offset - 1
KILN_HOST_DEVICE KILN_INLINE int64_t triu_row_start(int64_t r, int64_t col, int64_t offset) {
  return r * col - tril_row_start(r, col, offset - 1);
}

}  // namespace kiln::tri
#endif  // KILN_KERNELS_COMMON_TRI_INDICES_H_
