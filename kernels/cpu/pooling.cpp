// 2-d pooling and resampling on CPU, over the meta step's planes of H x W (kiln/meta/pooling.h).
// Each result element is computed on its own from the index math shared with CUDA
// (kiln/common/pooling_index.h), in float for 16-bit inputs, with each spatial dim's windows,
// spans and weights tabulated once per call (pool::AxisCache) instead of per element; max_pool2d
// and bilinear upsampling run separably instead (rows first, each row once), with the same
// picks and products. Backwards
// gather: each input element sums the outputs that read it, in output order (max pools and
// bilinear upsampling scatter plane by plane instead, in output order), so the result does not
// depend on the thread count. Threads split the (plane, row) pairs of the result.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>
#include "kiln/common/pooling_index.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/_adaptive_avg_pool2d.h"
#include "kiln/gen/kernels/cpu/_adaptive_avg_pool2d_backward.h"
#include "kiln/gen/kernels/cpu/adaptive_max_pool2d.h"
#include "kiln/gen/kernels/cpu/adaptive_max_pool2d_backward.h"
#include "kiln/gen/kernels/cpu/avg_pool2d.h"
#include "kiln/gen/kernels/cpu/avg_pool2d_backward.h"
#include "kiln/gen/kernels/cpu/max_pool2d_with_indices.h"
#include "kiln/gen/kernels/cpu/max_pool2d_with_indices_backward.h"
#include "kiln/gen/kernels/cpu/upsample_bilinear2d.h"
#include "kiln/gen/kernels/cpu/upsample_bilinear2d_backward.h"
#include "kiln/gen/kernels/cpu/upsample_nearest2d.h"
#include "kiln/gen/kernels/cpu/upsample_nearest2d_backward.h"
#include "kernel_utils.h"

namespace kiln::cpu {
namespace {

using pool::Geometry2d;
using pool::Span;

// Runs fn(T tag) for the plan's floating dtype (the registry admits floating dtypes only).
template <typename F>
void visit_floating(DType dtype, const F& fn) {
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) fn(tag);
  });
}

// out[p][r][c] = fn(p, r, c) over planes x rows x cols, `work` elements read per result.
template <typename F>
void each_result(int64_t planes, int64_t rows, int64_t cols, int64_t work, const F& fn) {
  if (planes == 0 || rows == 0 || cols == 0) return;
  kiln::detail::parallel_items(planes * rows, cols * work, [&](int64_t begin, int64_t end) {
    for (int64_t pr = begin; pr < end; ++pr) {
      const int64_t p = pr / rows, r = pr % rows;
      for (int64_t c = 0; c < cols; ++c) fn(p, r, c, (pr * cols) + c);
    }
  });
}

template <typename T>
const T* data_of(const TensorBase& t) {
  return static_cast<const T*>(t.data_ptr());
}
template <typename T>
T* out_of(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

int64_t in_plane(const Geometry2d& g) { return g.h.in * g.w.in; }
int64_t out_plane(const Geometry2d& g) { return g.h.out * g.w.out; }

// A forward over the result's elements: value(plane input, oh, ow) in the compute type.
template <typename T, typename F>
void forward(const Geometry2d& g, const TensorBase& out, const TensorBase& self, int64_t work, const F& value) {
  const T* x = data_of<T>(self);
  T* y = out_of<T>(out);
  each_result(g.planes, g.h.out, g.w.out, work,
              [&](int64_t p, int64_t oh, int64_t ow, int64_t at) { y[at] = T(value(x + p * in_plane(g), oh, ow)); });
}

// A backward over the input's elements: value(plane of grad_output, plane index, ih, iw).
template <typename T, typename F>
void backward(const Geometry2d& g, const TensorBase& grad_input, const TensorBase& grad_output, int64_t work,
              const F& value) {
  const T* dy = data_of<T>(grad_output);
  T* dx = out_of<T>(grad_input);
  each_result(g.planes, g.h.in, g.w.in, work, [&](int64_t p, int64_t ih, int64_t iw, int64_t at) {
    dx[at] = T(value(dy + p * out_plane(g), p, ih, iw));
  });
}

// f(i) for i in [0, n): one dim's answers, computed once per call.
template <typename V, typename F>
std::vector<V> table(int64_t n, const F& f) {
  std::vector<V> t(size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i) t[size_t(i)] = f(i);
  return t;
}

// Max pooling forwards (windowed and adaptive): values and indices over the tabulated windows.
template <typename T>
void max_forward(const Geometry2d& g, const TensorBase& output, const TensorBase& indices, const TensorBase& self,
                 int64_t step_h, int64_t step_w, const std::vector<Span>& wh, const std::vector<Span>& ww) {
  using Acc = opmath_t<T>;
  const T* x = data_of<T>(self);
  T* y = out_of<T>(output);
  int64_t* idx = out_of<int64_t>(indices);
  const int64_t work = (wh.empty() ? 1 : wh[0].end - wh[0].begin + 1) * (ww.empty() ? 1 : ww[0].end - ww[0].begin + 1);
  each_result(g.planes, g.h.out, g.w.out, work, [&](int64_t p, int64_t oh, int64_t ow, int64_t at) {
    Acc v;
    int64_t k;
    pool::max_over<Acc>(x + p * in_plane(g), g.w.in, wh[size_t(oh)], step_h, ww[size_t(ow)], step_w, &v, &k);
    y[at] = T(v);
    idx[at] = k;
  });
}

// max_pool2d's forward, separably: first each input row's maximum over every output column's
// window (value and column), then each output row's pick among its window's rows. Picking within
// a row, then among rows, by the walk's own rule (a larger value, or any NaN, replaces) gives the
// row-major walk's answer: the first maximum, or the last NaN. Each row's maxima are computed once
// for all the output rows whose windows share it (a small cache of rows, slot = row mod kernel
// extent), and the full windows run as vector loops with selects; the clipped ones at the edges
// take the window walk. S: the column stride when it is 1 or 2 (so the loads vectorize), else 0.
template <typename T, int64_t S>
void max_pool_rows(const Geometry2d& g, const TensorBase& output, const TensorBase& indices,
                   const TensorBase& self, const std::vector<Span>& wh, const std::vector<Span>& ww) {
  using Acc = opmath_t<T>;
  const pool::Dim& dw = g.w;
  const int64_t W = dw.in, OW = dw.out, OH = g.h.out;
  const int64_t stride = S > 0 ? S : dw.stride;
  // the output columns whose windows lie inside the row: ow * stride - pad >= 0 and the last tap
  // ow * stride - pad + (kernel - 1) * dilation <= W - 1
  const int64_t last = W - 1 + dw.pad - (dw.kernel - 1) * dw.dilation;
  const int64_t lo = std::min<int64_t>(OW, (dw.pad + stride - 1) / stride);
  const int64_t hi = last < 0 ? lo : std::max(lo, std::min(OW, last / stride + 1));
  const int64_t slots = std::max<int64_t>(1, std::min(g.h.kernel * g.h.dilation, g.h.in));
  const T* x = data_of<T>(self);
  T* y = out_of<T>(output);
  int64_t* idx = out_of<int64_t>(indices);
  kiln::detail::parallel_items(g.planes * OH, OW * g.h.kernel * dw.kernel, [&](int64_t begin, int64_t end) {
    // per slot: a row's maxima and their columns; per output row: the winners and their rows
    std::vector<Acc> slot_best(static_cast<size_t>(slots * OW)), best_of(static_cast<size_t>(OW));
    std::vector<int32_t> slot_col(static_cast<size_t>(slots * OW)), col_of(static_cast<size_t>(OW)),
        row_of(static_cast<size_t>(OW));
    std::vector<int64_t> slot_key(static_cast<size_t>(slots), -1);  // the p * H + ih a slot holds
    Acc* __restrict best = best_of.data();
    int32_t* __restrict col = col_of.data();
    int32_t* __restrict row = row_of.data();
    // row ih of plane p's maxima, computed into its slot unless they are there already
    auto row_maxima = [&](int64_t p, int64_t ih) {
      const int64_t key = p * g.h.in + ih, s = ih % slots;
      Acc* __restrict rb = slot_best.data() + s * OW;
      int32_t* __restrict rc = slot_col.data() + s * OW;
      if (slot_key[size_t(s)] == key) return s;
      slot_key[size_t(s)] = key;
      const T* __restrict r = x + key * W;
      auto walk = [&](int64_t ow) {  // a clipped window
        Acc v;
        int64_t k;
        pool::max_over<Acc>(r, W, Span{0, 1}, 1, ww[size_t(ow)], dw.dilation, &v, &k);
        rb[ow] = v;
        rc[ow] = int32_t(k);
      };
      for (int64_t ow = 0; ow < lo; ++ow) walk(ow);
      for (int64_t ow = hi; ow < OW; ++ow) walk(ow);
      for (int64_t ow = lo; ow < hi; ++ow) {
        rb[ow] = Acc(r[ow * stride - dw.pad]);
        rc[ow] = int32_t(ow * stride - dw.pad);
      }
      for (int64_t j = 1; j < dw.kernel; ++j) {
        const int64_t off = j * dw.dilation - dw.pad;
#pragma omp simd
        for (int64_t ow = lo; ow < hi; ++ow) {
          const Acc v = Acc(r[ow * stride + off]), b = rb[ow];
          const bool take = (v > b) | (v != v);
          rb[ow] = take ? v : b;
          rc[ow] = take ? int32_t(ow * stride + off) : rc[ow];
        }
      }
      return s;
    };
    for (int64_t po = begin; po < end; ++po) {
      const int64_t p = po / OH;
      const Span rows = wh[size_t(po % OH)];
      if (rows.begin >= rows.end) {  // no row (the walk's answer: -inf at the window's first place)
        for (int64_t ow = 0; ow < OW; ++ow) {
          best[ow] = -INFINITY;
          row[ow] = int32_t(rows.begin);
          col[ow] = int32_t(ww[size_t(ow)].begin);
        }
      }
      for (int64_t ih = rows.begin; ih < rows.end; ih += g.h.dilation) {
        const int64_t s = row_maxima(p, ih);
        const Acc* __restrict rb = slot_best.data() + s * OW;
        const int32_t* __restrict rc = slot_col.data() + s * OW;
        const int32_t r = int32_t(ih);
        if (ih == rows.begin) {
          for (int64_t ow = 0; ow < OW; ++ow) {
            best[ow] = rb[ow];
            row[ow] = r;
            col[ow] = rc[ow];
          }
          continue;
        }
#pragma omp simd
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Acc v = rb[ow], b = best[ow];
          const bool take = (v > b) | (v != v);
          best[ow] = take ? v : b;
          row[ow] = take ? r : row[ow];
          col[ow] = take ? rc[ow] : col[ow];
        }
      }
      T* __restrict yo = y + po * OW;
      int64_t* __restrict io = idx + po * OW;
      for (int64_t ow = 0; ow < OW; ++ow) {
        yo[ow] = T(best[ow]);
        io[ow] = int64_t(row[ow]) * W + col[ow];
      }
    }
  });
}

// Max pools' backward: each output's gradient added at its saved index, plane by plane in output
// order (the order the CUDA gather sums in), in the compute type; an index outside the plane (a
// window of padding only) passes nothing, as PyTorch's. One plane per thread at a time, so the
// result does not depend on the thread count, and the work is the outputs', not the inputs'.
template <typename T>
void max_backward(const Geometry2d& g, const TensorBase& grad_input, const TensorBase& grad_output,
                  const TensorBase& indices) {
  using Acc = opmath_t<T>;
  const int64_t plane_in = in_plane(g), plane_out = out_plane(g);
  if (g.planes == 0 || plane_in == 0) return;
  const int64_t* idx = data_of<int64_t>(indices);
  const T* dy = data_of<T>(grad_output);
  T* dx = out_of<T>(grad_input);
  // float and double sum in place; 16-bit types in a float plane, rounded once at the end
  constexpr bool in_place = std::is_same_v<T, Acc>;
  kiln::detail::parallel_items(g.planes, plane_in + plane_out, [&](int64_t begin, int64_t end) {
    std::vector<Acc> buffer(in_place ? 0 : static_cast<size_t>(plane_in));
    for (int64_t p = begin; p < end; ++p) {
      Acc* sums = buffer.data();
      if constexpr (in_place) sums = dx + p * plane_in;
      std::fill(sums, sums + plane_in, Acc(0));
      for (int64_t o = 0; o < plane_out; ++o) {
        const int64_t k = idx[p * plane_out + o];
        if (k >= 0 && k < plane_in) sums[k] += Acc(dy[p * plane_out + o]);
      }
      if constexpr (!in_place)
        for (int64_t i = 0; i < plane_in; ++i) dx[p * plane_in + i] = T(sums[i]);
    }
  });
}

// upsample_bilinear2d's forward, separably: each source row blended across first (its two
// columns per output column, once per row, kept for the output rows that share it), then each
// output row blends its two source rows in a vector loop. The products are the per-element
// formula's, l0_h * (l0_w * x00 + l1_w * x01) + l1_h * (l0_w * x10 + l1_w * x11).
template <typename T>
void bilinear_rows(const Geometry2d& g, const TensorBase& out, const TensorBase& self) {
  using Acc = opmath_t<T>;
  const int64_t W = g.w.in, OW = g.w.out, OH = g.h.out;
  const auto lh = table<pool::Linear<Acc>>(OH, [&](int64_t o) { return pool::linear_source<Acc>(g.h, o); });
  // the columns' sources and weights as separate arrays, for the row loop
  std::vector<int64_t> c0(static_cast<size_t>(OW)), c1(static_cast<size_t>(OW));
  std::vector<Acc> w0(static_cast<size_t>(OW)), w1(static_cast<size_t>(OW));
  for (int64_t o = 0; o < OW; ++o) {
    const pool::Linear<Acc> s = pool::linear_source<Acc>(g.w, o);
    c0[size_t(o)] = s.i0;
    c1[size_t(o)] = s.i0 + s.step;
    w0[size_t(o)] = s.l0;
    w1[size_t(o)] = s.l1;
  }
  const T* x = data_of<T>(self);
  T* y = out_of<T>(out);
  kiln::detail::parallel_items(g.planes * OH, OW * 3, [&](int64_t begin, int64_t end) {
    // two slots: an output row's sources are rows i0 and i0 + step (step 0 or 1), so slot ih % 2
    std::vector<Acc> blended(static_cast<size_t>(2 * OW));
    int64_t slot_key[2] = {-1, -1};  // the p * H + ih a slot holds
    auto row = [&](int64_t p, int64_t ih) -> const Acc* {
      const int64_t key = p * g.h.in + ih, s = ih & 1;
      Acc* __restrict b = blended.data() + s * OW;
      if (slot_key[s] == key) return b;
      slot_key[s] = key;
      const T* __restrict r = x + key * W;
      for (int64_t ow = 0; ow < OW; ++ow)
        b[ow] = w0[size_t(ow)] * Acc(r[c0[size_t(ow)]]) + w1[size_t(ow)] * Acc(r[c1[size_t(ow)]]);
      return b;
    };
    for (int64_t po = begin; po < end; ++po) {
      const pool::Linear<Acc>& sh = lh[size_t(po % OH)];
      const Acc* __restrict a = row(po / OH, sh.i0);
      const Acc* __restrict b = row(po / OH, sh.i0 + sh.step);
      T* __restrict yo = y + po * OW;
      const Acc l0 = sh.l0, l1 = sh.l1;
#pragma omp simd
      for (int64_t ow = 0; ow < OW; ++ow) yo[ow] = T(l0 * a[ow] + l1 * b[ow]);
    }
  });
}

// The work per result of an adaptive pool: about one window.
int64_t adaptive_work(const Geometry2d& g) {
  return ((g.h.in + g.h.out - 1) / g.h.out + 1) * ((g.w.in + g.w.out - 1) / g.w.out + 1);
}

}  // namespace

void max_pool2d_with_indices(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                             const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  const auto wh = table<Span>(g.h.out, [&](int64_t o) { return pool::max_window(g.h, o); });
  const auto ww = table<Span>(g.w.out, [&](int64_t o) { return pool::max_window(g.w, o); });
  if (g.planes == 0 || g.h.out == 0 || g.w.out == 0) return;
  // rows and columns are kept in 32 bits; the walk takes larger planes
  const bool separable = g.w.in < (int64_t(1) << 31) && g.h.in < (int64_t(1) << 31);
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (!separable)
      max_forward<T>(g, output, indices, self, g.h.dilation, g.w.dilation, wh, ww);
    else if (g.w.stride == 1)
      max_pool_rows<T, 1>(g, output, indices, self, wh, ww);
    else if (g.w.stride == 2)
      max_pool_rows<T, 2>(g, output, indices, self, wh, ww);
    else
      max_pool_rows<T, 0>(g, output, indices, self, wh, ww);
  });
}

void max_pool2d_with_indices_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                      const TensorBase& grad_output, const TensorBase& /*self*/,
                                      const TensorBase& indices) {
  visit_floating(plan.dtype,
                 [&](auto tag) { max_backward<decltype(tag)>(plan.geometry, grad_input, grad_output, indices); });
}

void adaptive_max_pool2d(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                         const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  if (g.h.out == 0 || g.w.out == 0) return;
  const auto wh = table<Span>(g.h.out, [&](int64_t o) { return pool::adaptive_window(g.h, o); });
  const auto ww = table<Span>(g.w.out, [&](int64_t o) { return pool::adaptive_window(g.w, o); });
  visit_floating(plan.dtype, [&](auto tag) { max_forward<decltype(tag)>(g, output, indices, self, 1, 1, wh, ww); });
}

void adaptive_max_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                  const TensorBase& grad_output, const TensorBase& /*self*/,
                                  const TensorBase& indices) {
  visit_floating(plan.dtype,
                 [&](auto tag) { max_backward<decltype(tag)>(plan.geometry, grad_input, grad_output, indices); });
}

void avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  const auto wh = table<pool::AvgSpan>(g.h.out, [&](int64_t o) { return pool::avg_window(g.h, o); });
  const auto ww = table<pool::AvgSpan>(g.w.out, [&](int64_t o) { return pool::avg_window(g.w, o); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    pool::AxisCache<Acc> ch, cw;
    ch.avg = wh.data();
    cw.avg = ww.data();
    forward<T>(g, out, self, g.h.kernel * g.w.kernel,
               [&](const T* x, int64_t oh, int64_t ow) { return pool::avg_pool_value<Acc>(g, x, oh, ow, ch, cw); });
  });
}

void avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                         const TensorBase& /*self*/) {
  const Geometry2d& g = plan.geometry;
  if (g.planes == 0) return;
  const auto wh = table<pool::AvgSpan>(g.h.out, [&](int64_t o) { return pool::avg_window(g.h, o); });
  const auto ww = table<pool::AvgSpan>(g.w.out, [&](int64_t o) { return pool::avg_window(g.w, o); });
  const auto oh = table<Span>(g.h.in, [&](int64_t i) { return pool::avg_outputs_of(g.h, i); });
  const auto ow = table<Span>(g.w.in, [&](int64_t i) { return pool::avg_outputs_of(g.w, i); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const T* dy = data_of<T>(grad_output);
    T* dx = out_of<T>(out);
    const int64_t plane_out = out_plane(g), work = (g.h.kernel / g.h.stride + 1) * (g.w.kernel / g.w.stride + 1);
    // each output's share (its gradient over its divisor: one division per output, as PyTorch's,
    // and the same quotient avg_pool_grad computes), then each input sums its outputs' shares
    kiln::detail::parallel_items(g.planes * g.h.in, g.w.in * work, [&](int64_t begin, int64_t end) {
      std::vector<Acc> share(static_cast<size_t>(plane_out));
      int64_t filled = -1;
      for (int64_t pr = begin; pr < end; ++pr) {
        const int64_t p = pr / g.h.in, ih = pr % g.h.in;
        if (p != filled) {
          for (int64_t o = 0; o < plane_out; ++o)
            share[size_t(o)] = Acc(dy[p * plane_out + o]) /
                               Acc(pool::avg_divisor(g, wh[size_t(o / g.w.out)], ww[size_t(o % g.w.out)]));
          filled = p;
        }
        const Span sh = oh[size_t(ih)];
        for (int64_t iw = 0; iw < g.w.in; ++iw) {
          const Span sw = ow[size_t(iw)];
          Acc s = 0;
          for (int64_t r = sh.begin; r < sh.end; ++r)
            for (int64_t c = sw.begin; c < sw.end; ++c) s += share[size_t(r * g.w.out + c)];
          dx[pr * g.w.in + iw] = T(s);
        }
      }
    });
  });
}

// Global average pooling (a 1 x 1 output): each plane is one contiguous run, summed by a vector
// loop (the window walk's per-output bookkeeping ran at 0.46x of libtorch at [64,512,7,7]).
template <typename T>
void global_average(const Geometry2d& g, const TensorBase& out, const TensorBase& self) {
  using Acc = opmath_t<T>;
  const int64_t planes = out.numel(), area = g.h.in * g.w.in;
  const T* x = static_cast<const T*>(self.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  kiln::detail::parallel_items(planes, area, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      Acc s = 0;
      const T* xp = x + p * area;
#pragma omp simd reduction(+ : s)
      for (int64_t i = 0; i < area; ++i) s += Acc(xp[i]);
      y[p] = T(s / Acc(area));
    }
  });
}

void _adaptive_avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  if (g.h.out == 0 || g.w.out == 0) return;
  if (g.h.out == 1 && g.w.out == 1 && g.h.in * g.w.in > 0) {
    visit_floating(plan.dtype, [&](auto tag) { global_average<decltype(tag)>(g, out, self); });
    return;
  }
  const auto wh = table<Span>(g.h.out, [&](int64_t o) { return pool::adaptive_window(g.h, o); });
  const auto ww = table<Span>(g.w.out, [&](int64_t o) { return pool::adaptive_window(g.w, o); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    pool::AxisCache<Acc> ch, cw;
    ch.adaptive = wh.data();
    cw.adaptive = ww.data();
    forward<T>(g, out, self, adaptive_work(g),
               [&](const T* x, int64_t oh, int64_t ow) { return pool::adaptive_avg_value<Acc>(g, x, oh, ow, ch, cw); });
  });
}

void _adaptive_avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                                   const TensorBase& /*self*/) {
  const Geometry2d& g = plan.geometry;
  const auto wh = table<Span>(g.h.out, [&](int64_t o) { return pool::adaptive_window(g.h, o); });
  const auto ww = table<Span>(g.w.out, [&](int64_t o) { return pool::adaptive_window(g.w, o); });
  const auto oh = table<Span>(g.h.in, [&](int64_t i) { return pool::adaptive_outputs_of(g.h, i); });
  const auto ow = table<Span>(g.w.in, [&](int64_t i) { return pool::adaptive_outputs_of(g.w, i); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    pool::AxisCache<Acc> ch, cw;
    ch.adaptive = wh.data();
    cw.adaptive = ww.data();
    ch.outputs_of = oh.data();
    cw.outputs_of = ow.data();
    backward<T>(g, out, grad_output, 4, [&](const T* dy, int64_t, int64_t ih, int64_t iw) {
      return pool::adaptive_avg_grad<Acc>(g, dy, ih, iw, ch, cw);
    });
  });
}

void upsample_nearest2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  const auto sh = table<int64_t>(g.h.out, [&](int64_t o) { return pool::nearest_source(g.h, o) * g.w.in; });
  const auto sw = table<int64_t>(g.w.out, [&](int64_t o) { return pool::nearest_source(g.w, o); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = data_of<T>(self);
    T* y = out_of<T>(out);
    each_result(g.planes, g.h.out, g.w.out, 1, [&](int64_t p, int64_t oh, int64_t ow, int64_t at) {
      y[at] = x[p * in_plane(g) + sh[size_t(oh)] + sw[size_t(ow)]];
    });
  });
}

void upsample_nearest2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  const Geometry2d& g = plan.geometry;
  const auto oh = table<Span>(g.h.in, [&](int64_t i) { return pool::nearest_outputs_of(g.h, i); });
  const auto ow = table<Span>(g.w.in, [&](int64_t i) { return pool::nearest_outputs_of(g.w, i); });
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    pool::AxisCache<Acc> ch, cw;
    ch.outputs_of = oh.data();
    cw.outputs_of = ow.data();
    const int64_t work = (g.h.out / g.h.in + 1) * (g.w.out / g.w.in + 1);
    backward<T>(g, out, grad_output, work, [&](const T* dy, int64_t, int64_t ih, int64_t iw) {
      return pool::nearest_grad<Acc>(g, dy, ih, iw, ch, cw);
    });
  });
}

void upsample_bilinear2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  if (g.planes == 0 || g.h.out == 0 || g.w.out == 0) return;
  visit_floating(plan.dtype, [&](auto tag) { bilinear_rows<decltype(tag)>(g, out, self); });
}

// Scattered plane by plane in output order (PyTorch's CPU order and products), one plane per
// thread at a time: the output's four weighted shares cost less than each input finding its
// outputs, and the result does not depend on the thread count.
void upsample_bilinear2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  const Geometry2d& g = plan.geometry;
  const int64_t plane_in = in_plane(g), plane_out = out_plane(g);
  if (g.planes == 0) return;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = opmath_t<T>;
    const auto lh = table<pool::Linear<Acc>>(g.h.out, [&](int64_t o) { return pool::linear_source<Acc>(g.h, o); });
    const auto lw = table<pool::Linear<Acc>>(g.w.out, [&](int64_t o) { return pool::linear_source<Acc>(g.w, o); });
    const T* dy = data_of<T>(grad_output);
    T* dx = out_of<T>(out);
    kiln::detail::parallel_items(g.planes, plane_in + 4 * plane_out, [&](int64_t begin, int64_t end) {
      std::vector<Acc> sums(static_cast<size_t>(plane_in));
      for (int64_t p = begin; p < end; ++p) {
        std::fill(sums.begin(), sums.end(), Acc(0));
        for (int64_t oh = 0; oh < g.h.out; ++oh) {
          const pool::Linear<Acc>& sh = lh[size_t(oh)];
          Acc* r0 = sums.data() + sh.i0 * g.w.in;
          Acc* r1 = r0 + sh.step * g.w.in;
          const T* gy = dy + p * plane_out + oh * g.w.out;
          for (int64_t ow = 0; ow < g.w.out; ++ow) {
            const pool::Linear<Acc>& sw = lw[size_t(ow)];
            const Acc v = Acc(gy[ow]);
            r0[sw.i0] += sh.l0 * sw.l0 * v;
            r0[sw.i0 + sw.step] += sh.l0 * sw.l1 * v;
            r1[sw.i0] += sh.l1 * sw.l0 * v;
            r1[sw.i0 + sw.step] += sh.l1 * sw.l1 * v;
          }
        }
        for (int64_t i = 0; i < plane_in; ++i) dx[p * plane_in + i] = T(sums[size_t(i)]);
      }
    });
  });
}

}  // namespace kiln::cpu
