#ifndef KILN_KERNELS_CUDA_PLAN_LAUNCH_H_
#define KILN_KERNELS_CUDA_PLAN_LAUNCH_H_
// Launch-shape arithmetic of the elementwise kernels, as plain host functions: which vector
// width the pointers allow, how many blocks a grid-stride loop needs. Unit-tested on the host.
#include <algorithm>
#include <cstdint>

namespace kiln::cuda_plan {

inline constexpr int kElementwiseThreads = 256;
// A grid-stride loop gets enough blocks to fill every SM this many times over, no more: more
// blocks only add scheduling, fewer leave SMs idle while the tail runs.
inline constexpr int kElementwiseWavesPerSm = 4;
inline constexpr int kMaxVectorBytes = 16;  // one 128-bit load per thread

struct LaunchShape {
  int64_t blocks = 0;
  int threads = 0;
};

// Widest vector width (elements; 4, 2 or 1) such that every operand's address is aligned to
// width * its element size and no vector exceeds 16 bytes. A zero-element launch gets 1.
inline int vector_width(const void* const* ptrs, const int* elem_sizes, int n) {
  int width = 4;
  for (int k = 0; k < n; ++k) {
    auto addr = reinterpret_cast<uintptr_t>(ptrs[k]);
    while (width > 1 && (elem_sizes[k] * width > kMaxVectorBytes || addr % uintptr_t(elem_sizes[k] * width) != 0))
      width /= 2;
  }
  return width;
}

// Blocks for `numel` elements, `per_thread` each per iteration, capped for a grid-stride loop.
inline LaunchShape elementwise_launch_shape(int64_t numel, int per_thread, int sm_count) {
  LaunchShape s;
  s.threads = kElementwiseThreads;
  if (numel <= 0) return s;
  int64_t per_block = int64_t(s.threads) * per_thread;
  int64_t needed = (numel + per_block - 1) / per_block;
  int64_t cap = int64_t(std::max(sm_count, 1)) * kElementwiseWavesPerSm * (2048 / s.threads);
  s.blocks = std::max<int64_t>(1, std::min(needed, cap));
  return s;
}

}  // namespace kiln::cuda_plan
#endif  // KILN_KERNELS_CUDA_PLAN_LAUNCH_H_
