#ifndef KILN_KERNELS_CUDA_PLAN_REDUCE_PLAN_H_
#define KILN_KERNELS_CUDA_PLAN_REDUCE_PLAN_H_
// Tiling of a row reduction on the GPU, as plain host arithmetic (tested on the host): `rows`
// independent rows of `length` contiguous elements each. A row gets a group of threads (a warp
// or more, a power of two) whose partial results meet in a warp shuffle then shared memory;
// short rows share a 256-thread block, so no thread idles on a row of 10 elements.
#include <algorithm>
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::cuda_plan {

inline constexpr int kReduceBlockThreads = 256;
inline constexpr int kWarp = 32;
inline constexpr int64_t kMaxGridBlocks = 65535 * 16;  // rows beyond: blocks loop over rows

struct ReduceShape {
  int threads_per_row = kWarp;  // blockDim.x: 32, 64, 128 or 256
  int rows_per_block = 1;       // blockDim.y: threads_per_row * rows_per_block == 256
  int64_t blocks = 0;           // gridDim.x (grid-stride over row groups)
};

// Elements per thread for accumulators wider than 8 bytes (reduce.cuh): one warp per row of 4096.
inline constexpr int64_t kWideAccPerThread = 128;

// Enough threads that each reads about `per_thread` elements of its row (4 unless said), at
// least one warp, at most 256.
inline ReduceShape reduce_shape(int64_t rows, int64_t length, int64_t per_thread = 4) {
  ReduceShape s;
  int t = kWarp;
  while (t < kReduceBlockThreads && int64_t(t) * per_thread < length) t *= 2;
  s.threads_per_row = t;
  s.rows_per_block = kReduceBlockThreads / t;
  const int64_t groups = (rows + s.rows_per_block - 1) / s.rows_per_block;
  s.blocks = std::min(groups, kMaxGridBlocks);
  return s;
}

// A long row split across blocks: when the rows alone leave most SMs idle (a full reduction is
// one row), each row is cut into `splits` chunks of `chunk` elements (the last may be shorter);
// pass 1 reduces every chunk to a partial, pass 2 reduces each row's `splits` partials.
inline constexpr int64_t kMinChunk = int64_t(kReduceBlockThreads) * 16;  // 16 loads per thread

struct RowSplit {
  int64_t splits = 1;
  int64_t chunk = 0;  // == length when not split
};

// Aims at 4 blocks per SM over all rows; a row is never cut into chunks shorter than kMinChunk.
inline RowSplit row_split(int64_t rows, int64_t length, int sm_count) {
  RowSplit r{1, length};
  const int64_t target_blocks = int64_t(sm_count > 0 ? sm_count : 1) * 4;
  if (rows <= 0 || rows >= target_blocks || length < 2 * kMinChunk) return r;
  const int64_t want = (target_blocks + rows - 1) / rows;
  const int64_t most = length / kMinChunk;
  const int64_t splits = std::min(want, most);
  if (splits < 2) return r;
  r.chunk = (length + splits - 1) / splits;
  r.splits = (length + r.chunk - 1) / r.chunk;  // no empty chunk
  return r;
}

// Chunk `c` of a row covers row elements [c * chunk, c * chunk + chunk_length); the kernels
// call this too.
KILN_HOST_DEVICE inline int64_t chunk_length(int64_t chunk, int64_t length, int64_t c) {
  const int64_t rest = length - c * chunk;
  return rest < chunk ? rest : chunk;
}

// Reduced dims followed by kept ones (sum over dim 0 of [N, C]): the input is [outer, len, inner]
// with inner > 1, output c = (o, i) is column c. A block is kColumnTile adjacent columns x
// kColumnSlices threads down each column (a warp reads 32 neighbouring elements), the slices
// meet in shared memory. Few columns and long ones: each column is also split into chunks over
// gridDim.y (partials finished by the row kernel).
inline constexpr int kColumnTile = 32;
inline constexpr int kColumnSlices = 8;
inline constexpr int64_t kMinColumnChunk = int64_t(kColumnSlices) * 16;
inline constexpr int64_t kMaxGridY = 65535;

struct ColumnShape {
  int64_t tiles = 0;   // gridDim.x (grid-stride over tiles of kColumnTile columns)
  int64_t splits = 1;  // gridDim.y
  int64_t chunk = 0;   // column elements per split (== len when not split)
};

inline ColumnShape column_shape(int64_t columns, int64_t len, int sm_count) {
  ColumnShape s;
  const int64_t tiles = (columns + kColumnTile - 1) / kColumnTile;
  s.tiles = std::min(tiles, kMaxGridBlocks);
  s.chunk = len;
  const int64_t target_blocks = int64_t(sm_count > 0 ? sm_count : 1) * 4;
  if (tiles >= target_blocks || len < 2 * kMinColumnChunk) return s;
  const int64_t splits = std::min({(target_blocks + tiles - 1) / tiles, len / kMinColumnChunk, kMaxGridY});
  if (splits < 2) return s;
  s.chunk = (len + splits - 1) / splits;
  s.splits = (len + s.chunk - 1) / s.chunk;
  return s;
}

// softmax along a dim of a tensor viewed as [outer, size, inner]: inner == 1 is rows (a row
// group each); with inner > 1 and enough columns (outer * inner) to fill the device, one thread
// per column walks the dim with stride inner (neighbouring threads read neighbouring elements);
// with few columns the dim is moved last instead, so row groups share each long column.
inline constexpr int64_t kMinStridedColumns = 2048;
inline bool softmax_strided(int64_t outer, int64_t inner) { return inner > 1 && outer * inner >= kMinStridedColumns; }

// Offset of element 0 of column c (of outer * inner columns) in the dense [outer, size, inner].
KILN_HOST_DEVICE inline int64_t column_base(int64_t c, int64_t size, int64_t inner) {
  return (c / inner) * size * inner + c % inner;
}

// Bytes of shared memory a block needs: one partial per warp per row, of `acc_bytes` each
// (and an index of 8 bytes for arg reductions).
inline size_t reduce_shared_bytes(const ReduceShape& s, size_t acc_bytes, bool with_index) {
  const size_t warps_per_row = size_t(s.threads_per_row / kWarp);
  return size_t(s.rows_per_block) * warps_per_row * (acc_bytes + (with_index ? 8 : 0));
}

// The elements thread `lane` of a row group reads, in order: lane, lane + threads, ... below length.
// (What the kernel's loop does; the host test checks every element is read exactly once.)
inline int64_t elements_of_lane(int64_t length, int threads, int lane) {
  return lane < length ? (length - lane + threads - 1) / threads : 0;
}

}  // namespace kiln::cuda_plan
#endif  // KILN_KERNELS_CUDA_PLAN_REDUCE_PLAN_H_
