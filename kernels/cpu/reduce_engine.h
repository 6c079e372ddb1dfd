#ifndef KILN_KERNELS_CPU_REDUCE_ENGINE_H_
#define KILN_KERNELS_CPU_REDUCE_ENGINE_H_
// The CPU reduction engine: one loop nest for every reduction kernel.
//
// make_reduce_loops takes the iteration layer's geometry (kiln/strided_geometry.h) of the input
// and the result (size-1 dims dropped, ordered by input stride, contiguous neighbours merged)
// and splits its dims into kept dims (one per output element) and reduced dims. A Reducer
// supplies the arithmetic:
//
//   using in_t, acc_t;
//   acc_t init(int64_t out_off) const;                       // identity (may read per-output data)
//   void step(acc_t&, in_t x, int64_t r) const;              // r: linear index within the reduction
//   void run(acc_t&, const in_t* p, int64_t n, int64_t stride, int64_t r) const;  // n steps
//   void merge(acc_t& a, const acc_t& b) const;              // b covers later indices than a
//   acc_t identity(const acc_t& a) const;                    // neutral element with a's per-output data
//                                                           // (only for reducers using run_by_lanes)
//   void write(int64_t out_off, const acc_t&) const;         // out_off: offset in the contiguous result
//
// Two loop orders: "inner" reduces each output along its own elements (the reduced dims are
// the fast ones), "vertical" keeps a block of accumulators for neighbouring outputs and sweeps
// the reduced dims (the kept dim is the fast one, e.g. sum over dim 0 of a row-major matrix).
// Parallelism is over outputs; when there are few outputs the reduction itself is cut into
// chunks (their length follows from the sizes alone) whose partial results merge in order.
// Neither depends on the thread count, so results are identical for any number of threads.
#include <omp.h>
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>
#include "kiln/cpu/parallel.h"
#include "kiln/meta/reduction.h"
#include "kiln/strided_geometry.h"
#include "kiln/tensor_base.h"

namespace kiln::cpu {

struct ReduceLoops {
  DimVector ksize, kin, kout;  // kept dims, innermost first: size, input stride, output stride
  DimVector rsize, rin;        // reduced dims, innermost first: size, input stride
  int64_t out_numel = 1, red_numel = 1;
};

inline ReduceLoops make_reduce_loops(const TensorBase& in, const meta::ReducePlan& rd) {
  ReduceLoops p;
  const int64_t nd = in.dim();
  IntArrayRef sizes = in.sizes();
  // Output strides over the input's shape: the result is contiguous in its keepdim shape, and
  // does not move along a reduced dim.
  DimVector ostride(size_t(nd), 0);
  for (int64_t d = nd - 1; d >= 0; --d) {
    const size_t i = size_t(d);
    if (rd.reduced[i]) {
      p.red_numel *= sizes[i];
    } else {
      ostride[i] = p.out_numel;
      p.out_numel *= sizes[i];
    }
  }
  if (p.red_numel == 0 || p.out_numel == 0) {  // nothing to read: each output is the identity
    p.ksize.push_back(p.out_numel); p.kin.push_back(0); p.kout.push_back(1);
    p.rsize.push_back(p.red_numel); p.rin.push_back(0);
    return p;
  }
  // The iteration layer's geometry of (input, result), strides in elements: dims ordered by the
  // input's strides, size-1 dims dropped, neighbours merged where both operands continue. The
  // dims where the result does not move are the reduced ones.
  IntArrayRef strides[2] = {in.strides(), ostride};
  const int64_t elements[2] = {1, 1};
  char* bases[2] = {nullptr, nullptr};
  const StridedGeometry g = make_geometry(sizes, 2, strides, elements, bases);
  for (int d = 0; d < g.ndim; ++d) {
    if (g.strides[1][d] == 0) {
      p.rsize.push_back(g.sizes[d]); p.rin.push_back(g.strides[0][d]);
    } else {
      p.ksize.push_back(g.sizes[d]); p.kin.push_back(g.strides[0][d]); p.kout.push_back(g.strides[1][d]);
    }
  }
  // Sentinels so loops never special-case "no dims".
  if (p.ksize.empty()) { p.ksize.push_back(1); p.kin.push_back(0); p.kout.push_back(0); }
  if (p.rsize.empty()) { p.rsize.push_back(1); p.rin.push_back(0); }
  return p;
}

namespace reduce_detail {

inline constexpr int64_t kMinChunk = 2048;   // fewest reduction elements per partial result
inline constexpr int64_t kMaxChunks = 32;    // most partial results per output
inline constexpr int64_t kBlock = 256;       // accumulators per vertical task
inline constexpr int64_t kSinkBlock = 64;    // results handed to a sink at once
inline constexpr int64_t kFewTasks = 16;     // below this, also split the reduction

// Multi-index over the kept dims carrying the input and output offsets.
struct KeptCursor {
  const ReduceLoops& p;
  DimVector idx;
  int64_t in = 0, out = 0;
  KeptCursor(const ReduceLoops& plan, int64_t linear) : p(plan), idx(plan.ksize.size(), 0) {
    for (size_t d = 0; d < p.ksize.size(); ++d) {
      idx[d] = linear % p.ksize[d];
      linear /= p.ksize[d];
      in += idx[d] * p.kin[d];
      out += idx[d] * p.kout[d];
    }
  }
  void next() {
    for (size_t d = 0; d < p.ksize.size(); ++d) {
      in += p.kin[d];
      out += p.kout[d];
      if (++idx[d] < p.ksize[d]) return;
      in -= p.ksize[d] * p.kin[d];
      out -= p.ksize[d] * p.kout[d];
      idx[d] = 0;
    }
  }
};

// Calls fn(offset, n, stride, r) for runs along the innermost reduced dim covering the
// linear reduction indices [r0, r1).
template <typename F>
void for_each_reduced_run(const ReduceLoops& p, int64_t r0, int64_t r1, F&& fn) {
  if (r0 >= r1) return;
  const int64_t n0 = p.rsize[0], s0 = p.rin[0];
  const size_t nd = p.rsize.size();
  DimVector idx(nd, 0);
  int64_t outer = r0 / n0, off = 0;
  for (size_t d = 1; d < nd; ++d) {
    idx[d] = outer % p.rsize[d];
    outer /= p.rsize[d];
    off += idx[d] * p.rin[d];
  }
  int64_t i0 = r0 % n0, r = r0;
  while (r < r1) {
    int64_t n = std::min(n0 - i0, r1 - r);
    fn(off + i0 * s0, n, s0, r);
    r += n;
    i0 = 0;
    for (size_t d = 1; d < nd; ++d) {
      off += p.rin[d];
      if (++idx[d] < p.rsize[d]) break;
      off -= p.rsize[d] * p.rin[d];
      idx[d] = 0;
    }
  }
}

// Where compute_range's results go, a block at a time: acc[0, n) are the results of outputs
// i0 + k (counted from the range's start), at out_off0 + k * out_stride in the result. One
// indirect call per block costs nothing measurable, and compute_range is compiled once per
// reducer instead of once per caller.
template <typename Acc>
struct ResultSink {
  void* ctx;
  void (*fn)(void* ctx, int64_t i0, int64_t n, int64_t out_off0, int64_t out_stride, const Acc* acc);
  void operator()(int64_t i0, int64_t n, int64_t out_off0, int64_t out_stride, const Acc* acc) const {
    fn(ctx, i0, n, out_off0, out_stride, acc);
  }
};
template <typename Acc, typename F>
ResultSink<Acc> make_sink(F& f) {
  return {&f, [](void* ctx, int64_t i0, int64_t n, int64_t out_off0, int64_t out_stride, const Acc* acc) {
            for (int64_t k = 0; k < n; ++k) (*static_cast<F*>(ctx))(i0 + k, out_off0 + k * out_stride, acc[k]);
          }};
}

// Accumulates outputs [o0, o1) over reduction indices [r0, r1); sink receives the results (their
// i counts from 0 within the range).
template <typename R>
__attribute__((noinline)) void compute_range(const ReduceLoops& p, const typename R::in_t* in, const R& red,
                                             bool vertical, int64_t o0, int64_t o1, int64_t r0, int64_t r1,
                                             ResultSink<typename R::acc_t> sink) {
  using acc_t = typename R::acc_t;
  using in_t = typename R::in_t;
  // one run per output (a single reduced dim, whole): no multi-index to walk, which matters for
  // short rows
  const bool one_run = p.rsize.size() == 1 && r0 == 0 && r1 == p.rsize[0];
  if (!vertical && one_run && p.ksize.size() == 1) {
    // one kept dim too: output o reads from o * kin[0] and lands at o * kout[0], and the results
    // go to the sink kSinkBlock at a time (a short row's reduction costs little more than a call:
    // mean of [32768, 49] 7.6 -> 5.8 ns a row)
    const int64_t kin = p.kin[0], kout = p.kout[0], rs = p.rin[0];
    acc_t block[kSinkBlock];
    for (int64_t b = o0; b < o1; b += kSinkBlock) {
      const int64_t nb = std::min(kSinkBlock, o1 - b);
      for (int64_t k = 0; k < nb; ++k) {
        acc_t a = red.init((b + k) * kout);
        red.run(a, in + (b + k) * kin, r1, rs, 0);
        block[k] = a;
      }
      sink(b - o0, nb, b * kout, kout, block);
    }
    return;
  }
  KeptCursor cur(p, o0);
  if (!vertical) {
    for (int64_t o = o0; o < o1; ++o, cur.next()) {
      acc_t a = red.init(cur.out);
      const in_t* base = in + cur.in;
      if (one_run) {
        red.run(a, base, r1, p.rin[0], 0);
      } else {
        for_each_reduced_run(p, r0, r1, [&](int64_t off, int64_t n, int64_t s, int64_t r) {
          red.run(a, base + off, n, s, r);
        });
      }
      sink(o - o0, 1, cur.out, 0, &a);
    }
    return;
  }
  // Vertical: [o0, o1) lies within one row of the fastest kept dim.
  const int64_t nb = o1 - o0, ks = p.kin[0], kos = p.kout[0];
  acc_t acc[kBlock];
  for (int64_t j = 0; j < nb; ++j) acc[j] = red.init(cur.out + j * kos);
  const in_t* base = in + cur.in;
  for_each_reduced_run(p, r0, r1, [&](int64_t off, int64_t n, int64_t s, int64_t r) {
    int64_t i = 0;
    if (ks == 1) {
      // Four rows per sweep: each accumulator is loaded and stored once per four steps, which
      // are applied in the same order as one at a time (identical results).
      for (; i + 4 <= n; i += 4) {
        const in_t* row = base + off + i * s;
#pragma omp simd
        for (int64_t j = 0; j < nb; ++j) {
          acc_t a = acc[j];
          red.step(a, row[j], r + i);
          red.step(a, row[j + s], r + i + 1);
          red.step(a, row[j + 2 * s], r + i + 2);
          red.step(a, row[j + 3 * s], r + i + 3);
          acc[j] = a;
        }
      }
    }
    for (; i < n; ++i) {
      const in_t* row = base + off + i * s;
      if (ks == 1) {
#pragma omp simd
        for (int64_t j = 0; j < nb; ++j) red.step(acc[j], row[j], r + i);
      } else {
#pragma omp simd
        for (int64_t j = 0; j < nb; ++j) red.step(acc[j], row[j * ks], r + i);
      }
    }
  });
  sink(0, nb, cur.out, kos, acc);
}

}  // namespace reduce_detail

// Runs reducer `red` over `in` (the data pointer of the tensor the plan was made from).
template <typename R>
void run_reduce(const ReduceLoops& p, const typename R::in_t* in, const R& red) {
  using namespace reduce_detail;
  using acc_t = typename R::acc_t;
  const int64_t O = p.out_numel, N = p.red_numel;
  if (O == 0) return;
  const bool vertical = p.ksize[0] > 1 && N > 1 && p.kin[0] < p.rin[0];
  // Tasks are ranges of outputs: blocks along the fast kept dim (vertical) or runs of outputs.
  const int64_t J = p.ksize[0];
  const int64_t blocks_per_row = vertical ? (J + kBlock - 1) / kBlock : 0;
  const int64_t per_task = vertical ? kBlock : std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(N, 1));
  const int64_t ntasks = vertical ? (O / J) * blocks_per_row : (O + per_task - 1) / per_task;
  auto task_range = [&](int64_t t) {
    if (vertical) {
      int64_t row = t / blocks_per_row, b = t % blocks_per_row;
      int64_t o0 = row * J + b * kBlock;
      return std::make_pair(o0, std::min(row * J + J, o0 + kBlock));
    }
    int64_t o0 = t * per_task;
    return std::make_pair(o0, std::min(O, o0 + per_task));
  };
  const bool parallel = O * std::max<int64_t>(N, 1) >= kParallelGrain;

  // Chunk length depends on N only (never on threads), so results are reproducible.
  const int64_t chunk = std::max(kMinChunk, (N + kMaxChunks - 1) / kMaxChunks);
  if (ntasks >= kFewTasks || N < 2 * chunk || !parallel) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < ntasks; ++t) {
      const std::pair<int64_t, int64_t> range = task_range(t);
      auto write = [&](int64_t, int64_t out_off, const acc_t& a) { red.write(out_off, a); };
      compute_range(p, in, red, vertical, range.first, range.second, 0, N, make_sink<acc_t>(write));
    }
    return;
  }

  // Few outputs, long reductions: partial results per (chunk, output), merged in chunk order.
  const int64_t nchunks = (N + chunk - 1) / chunk;
  // Not a std::vector: for all/any acc_t is bool, and vector<bool>'s packed bits would make
  // threads writing neighbouring partials race on one word.
  std::unique_ptr<acc_t[]> partial(new acc_t[size_t(nchunks * O)]());
  std::vector<int64_t> out_offs(static_cast<size_t>(O));
#pragma omp parallel for schedule(static) collapse(2)
  for (int64_t c = 0; c < nchunks; ++c) {
    for (int64_t t = 0; t < ntasks; ++t) {
      const std::pair<int64_t, int64_t> range = task_range(t);
      const int64_t o0 = range.first, r0 = c * chunk, r1 = std::min(N, r0 + chunk);
      auto keep = [&](int64_t i, int64_t out_off, const acc_t& a) {
        partial[size_t(c * O + o0 + i)] = a;
        if (c == 0) out_offs[size_t(o0 + i)] = out_off;
      };
      compute_range(p, in, red, vertical, o0, range.second, r0, r1, make_sink<acc_t>(keep));
    }
  }
  for (int64_t o = 0; o < O; ++o) {
    acc_t a = partial[size_t(o)];
    for (int64_t c = 1; c < nchunks; ++c) red.merge(a, partial[size_t(c * O + o)]);
    red.write(out_offs[size_t(o)], a);
  }
}

// Default `run` for reducers without a vectorized contiguous loop.
template <typename R, typename Acc, typename In>
KILN_INLINE void run_by_steps(const R& red, Acc& a, const In* p, int64_t n, int64_t s, int64_t r) {
  if (s == 1) {
    for (int64_t i = 0; i < n; ++i) red.step(a, p[i], r + i);
  } else {
    for (int64_t i = 0; i < n; ++i) red.step(a, p[i * s], r + i);
  }
}

// kLanes independent lanes over a contiguous run (lane k takes elements k, k + kLanes, ...; the
// tail goes to lane 0), folded pairwise in a fixed order.
template <int kLanes, typename R, typename Acc, typename In>
KILN_INLINE void run_in_lanes(const R& red, Acc& a, const In* p, int64_t n, int64_t r) {
  Acc lane[kLanes];
#pragma GCC unroll 32
  for (int k = 0; k < kLanes; ++k) lane[k] = red.identity(a);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if constexpr (kLanes > 8) {
#pragma omp simd
      for (int k = 0; k < kLanes; ++k) red.step(lane[k], p[i + k], r + i + k);
    } else {  // unrolled, the lanes stay in registers (the simd loop keeps them in memory)
#pragma GCC unroll 8
      for (int k = 0; k < kLanes; ++k) red.step(lane[k], p[i + k], r + i + k);
    }
  }
  for (; i < n; ++i) red.step(lane[0], p[i], r + i);
  // unrolled, so the lanes can stay in registers
#pragma GCC unroll 8
  for (int width = kLanes / 2; width >= 1; width /= 2) {
#pragma GCC unroll 32
    for (int k = 0; k < width; ++k) red.merge(lane[k], lane[k + width]);
  }
  red.merge(a, lane[0]);
}

// `run` for associative, order-free accumulations (sums, max, all ...; never arg-reductions):
// 32 independent lanes (several vector registers, so consecutive adds do not wait on each
// other) the compiler vectorizes; 8 (one register) for runs of 16 to 63 elements, such as a
// 7 x 7 plane, whose serial steps cost about 80 ns a row. The result depends only on the run
// boundaries, never on threads.
template <typename R, typename Acc, typename In>
KILN_INLINE void run_by_lanes(const R& red, Acc& a, const In* p, int64_t n, int64_t s, int64_t r) {
  if (s == 1 && n >= 64)
    run_in_lanes<32>(red, a, p, n, r);
  else if (s == 1 && n >= 16)
    run_in_lanes<8>(red, a, p, n, r);
  else
    run_by_steps(red, a, p, n, s, r);
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_REDUCE_ENGINE_H_
