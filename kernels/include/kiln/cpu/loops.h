#ifndef KILN_KERNELS_INCLUDE_KILN_CPU_LOOPS_H_
#define KILN_KERNELS_INCLUDE_KILN_CPU_LOOPS_H_
// The CPU iteration layer: elementwise loops over coalesced operand geometry
// (kiln/strided_geometry.h), a contiguous fast path the compiler vectorizes, transposed
// operands tile by tile, OpenMP above the one grain (kiln/cpu/parallel.h). Pointwise ops,
// copy_ and fill_ run on it.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include "kiln/cpu/parallel.h"
#include "kiln/pointwise.h"
#include "kiln/strided_geometry.h"

namespace kiln::cpu {

using kiln::StridedGeometry;
using kiln::make_geometry;

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

// True when some operand walks the two innermost dims in the other order than the output (a
// transposed input): a run along dim 0 then touches one cache line per element for it, so the
// loop goes tile by tile instead, and each tile's lines stay in L1 while it is swept.
inline bool wants_tiles(const StridedGeometry& g, int n) {
  if (g.ndim < 2 || g.sizes[0] < 8 || g.sizes[1] < 8) return false;
  for (int k = 0; k < n; ++k) {
    int64_t s0 = g.strides[k][0] < 0 ? -g.strides[k][0] : g.strides[k][0];
    int64_t s1 = g.strides[k][1] < 0 ? -g.strides[k][1] : g.strides[k][1];
    if (s1 != 0 && s1 < s0) return true;
  }
  return false;
}

// Tiles are tall and narrow: kTileCols along dim 0 (where the transposed operand jumps a row per
// element) by kTileRows along dim 1 (where it is contiguous). Measured here for
// out = a.t() + b at 4096 x 4096 floats: 20-24 ms with 128-256 x 8-16 tiles, against 50-80 ms
// with square 16-64 tiles; few distinct far-apart lines at a time is what the memory system
// (TLB, prefetchers, DRAM pages) rewards, not just fitting in L1. 16 columns keep the
// vectorized row runs worth their call.
inline constexpr int64_t kTileCols = 16;
inline constexpr int64_t kTileRows = 256;

// The one tiling scheme for transposed operands: a grid of tile0 x tile1 tiles over dims 0 and 1
// (dims 2.. are outer loops), split over the threads by the grain. fn(p, rows, cols) gets each
// tile's operand pointers at its corner, `cols` elements along dim 0 by `rows` along dim 1. The
// grid walk is compiled once (kernels/cpu/loops.cpp) and calls the tile body through a pointer: one
// indirect call per tile of thousands of elements, against a copy of the walk per op and dtype.
struct TileBody {
  const void* fn;
  void (*call)(const void* fn, char** p, int64_t rows, int64_t cols);
};
void visit_tiles(const StridedGeometry& g, int n, int64_t tile0, int64_t tile1, TileBody body);
template <typename Fn>
void for_each_tile(const StridedGeometry& g, int n, int64_t tile0, int64_t tile1, const Fn& fn) {
  visit_tiles(g, n, tile0, tile1, TileBody{&fn, [](const void* f, char** p, int64_t rows, int64_t cols) {
                                             (*static_cast<const Fn*>(f))(p, rows, cols);
                                           }});
}

// out = f(in) for one transposed input, tile by tile without staging: kDirectTileCols elements
// along the output's contiguous dim 0 by kTileRows along the input's dim 1, each written in
// place. For a conversion (copy_) the work per element is a load and a store, and the staged
// rows' per-row calls would cost more than they save: contiguous() of a transposed
// [4096, 4096] float32 took 10.8 ms this way against 23.7 ms staged (one thread, measured here).
inline constexpr int64_t kDirectTileCols = 8;
template <typename out_t, typename in_t, typename F>
void transpose_tiles(const StridedGeometry& g, const F& f) {
  const int64_t o0 = g.strides[0][0], o1 = g.strides[0][1], i0 = g.strides[1][0], i1 = g.strides[1][1];
  for_each_tile(g, 2, kDirectTileCols, kTileRows, [&](char** p, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        *reinterpret_cast<out_t*>(p[0] + r * o1 + c * o0) = out_t(f(*reinterpret_cast<const in_t*>(p[1] + r * i1 + c * i0)));
  });
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
// `omp simd` vectorizes even where -O2's cost model would not, and calls libmvec's vector math.
KILN_INLINE void run_dense(out_t* __restrict__ o, int64_t count, const F& f, const in_t* __restrict__... in) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) o[i] = out_t(f(in[i]...));
}
// The two loops compiled per op and dtype, called through pointers by the walk
// (walk_strided, compiled once): a dense run of every operand, and a run of any strides. Out
// of line, there is one copy of each vectorized loop per op and dtype however many walks
// (dense, run by run, tile by tile) reach it. Inlined into each walk (and the walks compiled
// per op and dtype), the generated CPU kernels took four times the compile time (253 s against
// 61 s), for one call per run saved.
template <typename out_t, typename... in_t, typename F, size_t... I>
KILN_INLINE void run_contiguous(char** p, int64_t count, const F& f, std::index_sequence<I...>) {
  run_dense<out_t, in_t...>(reinterpret_cast<out_t*>(p[0]), count, f, reinterpret_cast<const in_t*>(p[I + 1])...);
}
template <typename F, typename out_t, typename... in_t>
__attribute__((noinline)) void dense_body(const void* fn, char** p, int64_t count) {
  run_contiguous<out_t, in_t...>(p, count, *static_cast<const F*>(fn), std::index_sequence_for<in_t...>{});
}
// A binary op with one operand broadcast along the run (x * 2, a row added to a matrix's
// columns): the broadcast value is loaded once and the rest vectorizes like a dense run.
template <typename out_t, typename A, typename B, typename F>
KILN_INLINE void run_dense_scalar_b(out_t* __restrict__ o, int64_t count, const F& f, const A* __restrict__ a, B b) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) o[i] = out_t(f(a[i], b));
}
template <typename out_t, typename A, typename B, typename F>
KILN_INLINE void run_dense_scalar_a(out_t* __restrict__ o, int64_t count, const F& f, A a, const B* __restrict__ b) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) o[i] = out_t(f(a, b[i]));
}
// One run of a strided loop: the dense and broadcast-operand shapes take vectorized loops.
template <typename out_t, typename... in_t, typename F, size_t... I>
KILN_INLINE void run_any(char** p, const int64_t* s, int64_t count, const F& f, std::index_sequence<I...> seq) {
  const bool out_dense = s[0] == int64_t(sizeof(out_t));
  if (out_dense && ((s[I + 1] == int64_t(sizeof(in_t))) && ...)) {
    dense_body<F, out_t, in_t...>(&f, p, count);
    return;
  }
  if constexpr (sizeof...(in_t) == 1) {
    // One input broadcast along the run (copy_ of a row into a matrix, fill-like ops): the value
    // is computed once and stored count times.
    if (out_dense && s[1] == 0) {
      using A = std::tuple_element_t<0, std::tuple<in_t...>>;
      const out_t v = out_t(f(*reinterpret_cast<const A*>(p[1])));
      std::fill_n(reinterpret_cast<out_t*>(p[0]), count, v);
      return;
    }
  }
  if constexpr (sizeof...(in_t) == 2) {
    using A = std::tuple_element_t<0, std::tuple<in_t...>>;
    using B = std::tuple_element_t<1, std::tuple<in_t...>>;
    out_t* o = reinterpret_cast<out_t*>(p[0]);
    if (out_dense && s[1] == int64_t(sizeof(A)) && s[2] == 0) {
      run_dense_scalar_b<out_t>(o, count, f, reinterpret_cast<const A*>(p[1]), *reinterpret_cast<const B*>(p[2]));
      return;
    }
    if (out_dense && s[1] == 0 && s[2] == int64_t(sizeof(B))) {
      run_dense_scalar_a<out_t>(o, count, f, *reinterpret_cast<const A*>(p[1]), reinterpret_cast<const B*>(p[2]));
      return;
    }
  }
  run_strided<out_t, in_t...>(p, s, count, f, seq);
}
template <typename F, typename out_t, typename... in_t>
void any_body(const void* fn, char** p, const int64_t* s, int64_t count) {
  run_any<out_t, in_t...>(p, s, count, *static_cast<const F*>(fn), std::index_sequence_for<in_t...>{});
}
}  // namespace detail

// An op's loop bodies for one dtype (detail::dense_body, detail::any_body) and its functor.
struct LoopBodies {
  const void* fn;
  void (*dense)(const void* fn, char** p, int64_t count);
  void (*any)(const void* fn, char** p, const int64_t* strides, int64_t count);
};
// The walk over the operands of `g` (operand 0 the output; elem: their sizes), compiled once
// (kernels/cpu/loops.cpp): dense operands in one run per thread, transposed ones tile by tile (staged
// into dense rows), the rest run by run along the innermost dim, split over the threads by the
// one grain rule.
void walk_strided(const StridedGeometry& g, int n, const size_t* elem, const LoopBodies& bodies);

// Runs out = f(inputs...) over the operands of `g` (operand 0 the output): dense operands in
// one vectorized run, transposed ones tile by tile, the rest run by run along the innermost
// dim, split over the threads by the one grain rule. out_t/in_t are storage types; f is called
// with them (16-bit floats convert to float). Pointwise ops and fill_ come here.
template <typename out_t, typename... in_t, typename F>
void strided_loop(const StridedGeometry& g, const F& f) {
  if (g.numel == 0) return;
  const size_t elem[] = {sizeof(out_t), sizeof(in_t)...};
  walk_strided(g, 1 + int(sizeof...(in_t)), elem,
               LoopBodies{&f, &detail::dense_body<F, out_t, in_t...>, &detail::any_body<F, out_t, in_t...>});
}

// strided_loop for copy_, where f only converts (the work per element is a load and a store): a
// transposed input is tiled without staging it.
template <typename out_t, typename in_t, typename F>
void conversion_loop(const StridedGeometry& g, const F& f) {
  if (g.numel != 0 && !g.contiguous && wants_tiles(g, 2)) {
    transpose_tiles<out_t, in_t>(g, f);
    return;
  }
  strided_loop<out_t, in_t>(g, f);
}

template <typename out_t, typename... in_t, typename F>
void pointwise_loop(const PointwiseCall& call, const F& f) {
  constexpr int n = 1 + sizeof...(in_t);
  const TensorBase* ops[n];
  ops[0] = &call.out;
  for (int k = 1; k < n; ++k) ops[k] = &call.input(k - 1);
  strided_loop<out_t, in_t...>(make_geometry(ops, n), f);
}

// The runner the generated per-op dispatch (kiln/gen/pointwise/<op>.h) calls on CPU.
struct LoopRunner {
  template <typename out_t, typename... in_t, typename F>
  void run(const PointwiseCall& call, const F& f) const {
    pointwise_loop<out_t, in_t...>(call, f);
  }
};

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_INCLUDE_KILN_CPU_LOOPS_H_
