#ifndef KILN_RUNTIME_INCLUDE_KILN_CPU_LOOPS_H_
#define KILN_RUNTIME_INCLUDE_KILN_CPU_LOOPS_H_
// CPU elementwise loops over a prepared PointwiseCall: contiguous fast path the compiler
// vectorizes, a general strided path over coalesced dimensions, OpenMP above a threshold.
#include <omp.h>
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include "kiln/pointwise.h"

namespace kiln::cpu {

inline constexpr int64_t kParallelGrain = 32768;  // elements per thread worth the fork

// Geometry of up to 5 operands (out + 4 inputs) with dims coalesced, innermost first.
struct StridedGeometry {
  int ndim = 0;
  int64_t sizes[16];
  int64_t strides[5][16];  // bytes
  char* base[5];
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense in the same order
};
StridedGeometry make_geometry(const Tensor* const* operands, int n);

// Calls body(ptrs, strides_bytes, count) over runs of the innermost dimension covering
// linear indices [begin, end).
template <typename Body>
void for_each_run(const StridedGeometry& g, int n, int64_t begin, int64_t end, Body&& body) {
  int64_t idx[16] = {0};
  int64_t rem = begin;
  for (int d = 0; d < g.ndim; ++d) {
    idx[d] = rem % g.sizes[d];
    rem /= g.sizes[d];
  }
  char* ptrs[5];
  int64_t inner_strides[5];
  for (int k = 0; k < n; ++k) {
    ptrs[k] = g.base[k];
    for (int d = 0; d < g.ndim; ++d) ptrs[k] += idx[d] * g.strides[k][d];
    inner_strides[k] = g.ndim ? g.strides[k][0] : 0;
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t inner = g.ndim ? g.sizes[0] : 1;
    int64_t count = std::min(inner - idx[0], end - pos);
    body(ptrs, inner_strides, count);
    pos += count;
    if (pos >= end) break;
    // advance the multi-index past this run
    for (int k = 0; k < n; ++k) ptrs[k] += count * inner_strides[k];
    idx[0] += count;
    for (int d = 0; d < g.ndim - 1 && idx[d] == g.sizes[d]; ++d) {
      for (int k = 0; k < n; ++k) ptrs[k] += g.strides[k][d + 1] - g.sizes[d] * g.strides[k][d];
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

// Splits [0, numel) over OpenMP threads; only as many threads as have kParallelGrain elements
// each (a small op forked over every core costs more than it saves). fn must not throw.
template <typename Fn>
void parallel_for(int64_t numel, Fn&& fn) {
  int64_t want = numel / kParallelGrain;
  if (want < 2 || omp_in_parallel() || omp_get_max_threads() < 2) {
    fn(int64_t(0), numel);
    return;
  }
  int nt = int(std::min<int64_t>(want, omp_get_max_threads()));
#pragma omp parallel num_threads(nt)
  {
    int threads = omp_get_num_threads(), t = omp_get_thread_num();
    // chunks are multiples of 64 elements, so vector loops and cache lines split cleanly
    int64_t chunk = ((numel + threads - 1) / threads + 63) / 64 * 64;
    int64_t b = std::min(numel, t * chunk), e = std::min(numel, b + chunk);
    if (b < e) fn(b, e);
  }
}

namespace detail {
template <typename out_t, typename... in_t, typename F, size_t... I>
KILN_INLINE void run_strided(char** p, const int64_t* s, int64_t count, const F& f, std::index_sequence<I...>) {
  for (int64_t i = 0; i < count; ++i)
    *reinterpret_cast<out_t*>(p[0] + i * s[0]) = out_t(f(*reinterpret_cast<const in_t*>(p[I + 1] + i * s[I + 1])...));
}
// Restrict-qualified parameters (not tuple members, where the qualifier is lost) let the
// compiler vectorize without alias checks. An in-place op passes out == an input: every element
// is read before it is written at the same index, which this loop preserves.
template <typename out_t, typename... in_t, typename F>
KILN_INLINE void run_dense(out_t* __restrict__ o, int64_t count, const F& f, const in_t* __restrict__... in) {
  for (int64_t i = 0; i < count; ++i) o[i] = out_t(f(in[i]...));
}
template <typename out_t, typename... in_t, typename F, size_t... I>
KILN_INLINE void run_contiguous(char** p, int64_t count, const F& f, std::index_sequence<I...>) {
  run_dense<out_t, in_t...>(reinterpret_cast<out_t*>(p[0]), count, f, reinterpret_cast<const in_t*>(p[I + 1])...);
}
}  // namespace detail

// out_t/in_t are storage types; f is called with them (16-bit floats convert to float).
template <typename out_t, typename... in_t, typename F>
void pointwise_loop(const PointwiseCall& call, const F& f) {
  constexpr int n = 1 + sizeof...(in_t);
  const Tensor* ops[n];
  ops[0] = &call.out;
  for (int k = 1; k < n; ++k) ops[k] = &call.inputs[k - 1];
  StridedGeometry g = make_geometry(ops, n);
  if (g.numel == 0) return;
  using Seq = std::index_sequence_for<in_t...>;
  parallel_for(g.numel, [&](int64_t b, int64_t e) {
    if (g.contiguous) {
      char* p[n];
      p[0] = g.base[0] + b * int64_t(sizeof(out_t));
      int k = 1;
      ((p[k] = g.base[k] + b * int64_t(sizeof(in_t)), ++k), ...);
      detail::run_contiguous<out_t, in_t...>(p, e - b, f, Seq{});
    } else {
      for_each_run(g, n, b, e, [&](char** p, const int64_t* s, int64_t count) {
        detail::run_strided<out_t, in_t...>(p, s, count, f, Seq{});
      });
    }
  });
}

}  // namespace kiln::cpu
#endif  // KILN_RUNTIME_INCLUDE_KILN_CPU_LOOPS_H_
