#ifndef KILN_RUNTIME_INCLUDE_KILN_CPU_PARALLEL_H_
#define KILN_RUNTIME_INCLUDE_KILN_CPU_PARALLEL_H_
// Splitting a range across the OpenMP threads (the one pool kiln and OpenBLAS share).
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace kiln::cpu {
// The one grain rule of kiln's CPU loops: a parallel region is worth its fork when each thread
// gets at least this many elements of work (pointwise loops, copies, reductions, scans,
// softmax, random fills).
inline constexpr int64_t kParallelGrain = 32768;
}  // namespace kiln::cpu

namespace kiln::detail {

using cpu::kParallelGrain;

// fn(begin, end) over [0, n) in one contiguous chunk per thread; serial inside a parallel region.
template <typename Fn>
void parallel_chunks(int64_t n, const Fn& fn) {
  if (n <= 0) return;
  if (omp_in_parallel()) {
    fn(int64_t(0), n);
    return;
  }
#pragma omp parallel
  {
    int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) fn(b, e);
  }
}

// parallel_chunks when n elements are worth it, else one serial call.
template <typename Fn>
void parallel_range(int64_t n, const Fn& fn) {
  if (n < kParallelGrain) fn(int64_t(0), n);
  else parallel_chunks(n, fn);
}

// parallel_chunks over n items of work_per_item elements each, when the total is worth a fork.
template <typename Fn>
void parallel_items(int64_t n, int64_t work_per_item, const Fn& fn) {
  if (n < 2 || n * work_per_item < kParallelGrain) fn(int64_t(0), n);
  else parallel_chunks(n, fn);
}

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_INCLUDE_KILN_CPU_PARALLEL_H_
