#ifndef KILN_KERNELS_CUDA_PLAN_REDUCE_PLAN_H_
#define KILN_KERNELS_CUDA_PLAN_REDUCE_PLAN_H_
// Tiling of a row reduction on the GPU, as plain host arithmetic (tested on the host): `rows`
// independent rows of `length` contiguous elements each. A row gets a group of threads (a warp
// or more, a power of two) whose partial results meet in a warp shuffle then shared memory;
// short rows share a 256-thread block, so no thread idles on a row of 10 elements.
#include <algorithm>
#include <cstdint>

namespace kiln::cuda_plan {

inline constexpr int kReduceBlockThreads = 256;
inline constexpr int kWarp = 32;
inline constexpr int64_t kMaxGridBlocks = 65535 * 16;  // rows beyond: blocks loop over rows

struct ReduceShape {
  int threads_per_row = kWarp;  // blockDim.x: 32, 64, 128 or 256
  int rows_per_block = 1;       // blockDim.y: threads_per_row * rows_per_block == 256
  int64_t blocks = 0;           // gridDim.x (grid-stride over row groups)
};

// Enough threads that each reads about 4 elements of its row, at least one warp, at most 256.
inline ReduceShape reduce_shape(int64_t rows, int64_t length) {
  ReduceShape s;
  int t = kWarp;
  while (t < kReduceBlockThreads && int64_t(t) * 4 < length) t *= 2;
  s.threads_per_row = t;
  s.rows_per_block = kReduceBlockThreads / t;
  const int64_t groups = (rows + s.rows_per_block - 1) / s.rows_per_block;
  s.blocks = std::min(groups, kMaxGridBlocks);
  return s;
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
