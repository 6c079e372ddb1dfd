#ifndef KILN_KERNELS_INCLUDE_KILN_CPU_PARALLEL_H_
#define KILN_KERNELS_INCLUDE_KILN_CPU_PARALLEL_H_
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

// Threads worth forking for `work` elements: one per kParallelGrain, at most every thread and
// at most `items`; 1 inside a parallel region (nested regions would oversubscribe).
inline int threads_for(int64_t work, int64_t items) {
  const int64_t want = std::min<int64_t>(work / kParallelGrain, items);
  if (want < 2 || omp_in_parallel()) return 1;  // small work first: a tiny op makes no OpenMP call
  return int(std::min<int64_t>(want, omp_get_max_threads()));
}

// fn(begin, end) over [0, n) in one contiguous chunk per thread, each chunk a multiple of
// `align` items (64 elements keep vector loops and cache lines whole). fn must not throw.
template <typename Fn>
void parallel_chunks(int64_t n, int threads, int64_t align, const Fn& fn) {
  if (n <= 0) return;
  if (threads < 2) {
    fn(int64_t(0), n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t chunk = ((n + nt - 1) / nt + align - 1) / align * align;
    const int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) fn(b, e);
  }
}

// [0, n) elements over as many threads as the grain allows (pointwise loops, copies).
template <typename Fn>
void parallel_range(int64_t n, const Fn& fn) {
  parallel_chunks(n, threads_for(n, n), 64, fn);
}

// n items of work_per_item elements each (rows of a scan, lines of a gather).
template <typename Fn>
void parallel_items(int64_t n, int64_t work_per_item, const Fn& fn) {
  parallel_chunks(n, threads_for(n * work_per_item, n), 1, fn);
}

}  // namespace kiln::detail
#endif  // KILN_KERNELS_INCLUDE_KILN_CPU_PARALLEL_H_
