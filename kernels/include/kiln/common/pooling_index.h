#ifndef KILN_KERNELS_COMMON_POOLING_INDEX_H_
#define KILN_KERNELS_COMMON_POOLING_INDEX_H_
// Per-element index math of the 2-d pooling and resampling ops, shared by the CPU and CUDA
// kernels (kernels/cpu/pooling.cpp, kernels/cuda/pooling.cu) so both pick the same windows and
// source pixels, PyTorch 1.13's. Every backward is a gather: each input element sums the outputs
// whose window (or source pixel) holds it, so no kernel needs atomics and the CPU's results do
// not depend on the thread count.
#include <cmath>
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::pool {

// One spatial dim of a pooling window (kernel, stride, padding, dilation) or of a resampling
// (scale: source pixels per output pixel, align_corners).
struct Dim {
  int64_t in = 0, out = 0;
  int64_t kernel = 1, stride = 1, pad = 0, dilation = 1;
  float nearest_scale = 1;  // upsample_nearest: PyTorch computes it in float
  double scale = 0;         // upsample's scales_h / scales_w when given (> 0), else 0
  bool align_corners = false;
};

// What a pooling window covers and how an average divides.
struct Geometry2d {
  int64_t planes = 0;  // batch * channels
  Dim h, w;
  bool count_include_pad = true;
  int64_t divisor = 0;  // divisor_override; 0: none
};

KILN_HOST_DEVICE KILN_INLINE int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
KILN_HOST_DEVICE KILN_INLINE int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// ---------------------------------------------------------------- max pooling
// The window of output o: first input index (the first one >= 0 on the dilation grid) and end.
struct Span {
  int64_t begin, end;
};
KILN_HOST_DEVICE KILN_INLINE Span max_window(const Dim& d, int64_t o) {
  int64_t b = o * d.stride - d.pad;
  const int64_t e = min64(b + (d.kernel - 1) * d.dilation + 1, d.in);
  if (b < 0) b += ((-b + d.dilation - 1) / d.dilation) * d.dilation;
  return {b, e};
}
// The outputs whose window may hold input i (PyTorch's CUDA p_start / p_end); the backward then
// checks each output's saved index.
KILN_HOST_DEVICE KILN_INLINE Span max_outputs_of(const Dim& d, int64_t i) {
  const int64_t ext = (d.kernel - 1) * d.dilation + 1;
  const int64_t b = (i + d.pad < ext) ? 0 : (i + d.pad - ext) / d.stride + 1;
  return {b, min64((i + d.pad) / d.stride + 1, d.out)};
}

// The maximum over rows h and columns w (every step-th) of `plane` (row-major, `width` wide) and
// its flat index. A NaN wins over every number (the last NaN seen, as PyTorch's kernels); an
// all -inf window keeps its first index.
template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE void max_over(const T* plane, int64_t width, Span h, int64_t step_h, Span w,
                                           int64_t step_w, Acc* value, int64_t* index) {
  Acc best = -INFINITY;
  int64_t at = h.begin * width + w.begin;
  for (int64_t ih = h.begin; ih < h.end; ih += step_h) {
    for (int64_t iw = w.begin; iw < w.end; iw += step_w) {
      const int64_t k = ih * width + iw;
      const Acc v = Acc(plane[k]);
      if (v > best || v != v) {
        best = v;
        at = k;
      }
    }
  }
  *value = best;
  *index = at;
}

// ---------------------------------------------------------------- average pooling
// Output o's window clipped to the input, and the divisor PyTorch uses for it.
struct AvgSpan {
  int64_t begin, end, padded;  // padded: the window's length inside input + padding
};
KILN_HOST_DEVICE KILN_INLINE AvgSpan avg_window(const Dim& d, int64_t o) {
  const int64_t b = o * d.stride - d.pad;
  const int64_t e = min64(b + d.kernel, d.in + d.pad);
  return {max64(b, 0), min64(e, d.in), e - b};
}
KILN_HOST_DEVICE KILN_INLINE int64_t avg_divisor(const Geometry2d& g, const AvgSpan& h, const AvgSpan& w) {
  if (g.divisor != 0) return g.divisor;
  return g.count_include_pad ? h.padded * w.padded : (h.end - h.begin) * (w.end - w.begin);
}
// The outputs whose window holds input i: o * stride - pad <= i < o * stride - pad + kernel.
KILN_HOST_DEVICE KILN_INLINE Span avg_outputs_of(const Dim& d, int64_t i) {
  const int64_t j = i + d.pad;
  const int64_t b = j < d.kernel ? 0 : (j - d.kernel) / d.stride + 1;
  return {b, min64(j / d.stride + 1, d.out)};
}

// ---------------------------------------------------------------- adaptive pooling
// Output o covers [floor(o * in / out), ceil((o + 1) * in / out)).
KILN_HOST_DEVICE KILN_INLINE Span adaptive_window(const Dim& d, int64_t o) {
  return {(o * d.in) / d.out, ((o + 1) * d.in + d.out - 1) / d.out};
}
// The outputs whose window holds input i: [floor(i * out / in), ceil((i + 1) * out / in)).
KILN_HOST_DEVICE KILN_INLINE Span adaptive_outputs_of(const Dim& d, int64_t i) {
  return {(i * d.out) / d.in, ((i + 1) * d.out + d.in - 1) / d.in};
}

// ---------------------------------------------------------------- nearest resampling
// PyTorch 1.13's nearest_idx: the same index when sizes match, o / 2 when doubling, else
// min(floor(o * scale), in - 1) with the scale in float.
KILN_HOST_DEVICE KILN_INLINE int64_t nearest_source(const Dim& d, int64_t o) {
  if (d.out == d.in) return o;
  if (d.out == 2 * d.in) return o >> 1;
  const float src = floorf(float(o) * d.nearest_scale);
  return src < float(d.in - 1) ? int64_t(src) : d.in - 1;  // compared first: a huge float has no int64
}

// The first output in [0, out) whose value of the nondecreasing f is >= v (a binary search, so
// a backward inverts exactly the forward's rounding).
template <typename F>
KILN_HOST_DEVICE KILN_INLINE int64_t first_output_at_least(const Dim& d, int64_t v, const F& f) {
  int64_t lo = 0, hi = d.out;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (f(mid) >= v) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

struct NearestOf {
  const Dim* d;
  KILN_HOST_DEVICE KILN_INLINE int64_t operator()(int64_t o) const { return nearest_source(*d, o); }
};
// The outputs that copy input i.
KILN_HOST_DEVICE KILN_INLINE Span nearest_outputs_of(const Dim& d, int64_t i) {
  const NearestOf f{&d};
  return {first_output_at_least(d, i, f), first_output_at_least(d, i + 1, f)};
}

// ---------------------------------------------------------------- bilinear resampling
// Output o reads inputs i0 and i0 + step with weights l0 and l1 (PyTorch 1.13's
// area_pixel_compute_source_index; a half-pixel index below 0 is clamped to 0).
template <typename Acc>
struct Linear {
  int64_t i0, step;
  Acc l0, l1;
};
// Source pixels per output pixel, in the compute type as PyTorch's area_pixel_compute_scale.
template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE Acc linear_scale(const Dim& d) {
  if (d.align_corners) return d.out > 1 ? Acc(d.in - 1) / Acc(d.out - 1) : Acc(0);
  return d.scale > 0 ? Acc(1.0 / d.scale) : Acc(d.in) / Acc(d.out);
}
template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE Linear<Acc> linear_source(const Dim& d, int64_t o) {
  const Acc scale = linear_scale<Acc>(d);
  Acc real = d.align_corners ? scale * Acc(o) : scale * (Acc(o) + Acc(0.5)) - Acc(0.5);
  if (!d.align_corners && real < Acc(0)) real = Acc(0);
  // scales_h inconsistent with output_size could point past the input (PyTorch reads out of
  // bounds there): the last pixel instead (clamped before the cast: a huge float has no int64)
  if (!(real < Acc(d.in))) real = Acc(d.in - 1);
  const int64_t i0 = int64_t(real);
  const int64_t step = i0 < d.in - 1 ? 1 : 0;
  Acc l1 = real - Acc(i0);
  l1 = l1 < Acc(0) ? Acc(0) : (l1 > Acc(1) ? Acc(1) : l1);
  return {i0, step, Acc(1) - l1, l1};
}
template <typename Acc>
struct LinearFirst {  // i0: nondecreasing in o
  const Dim* d;
  KILN_HOST_DEVICE KILN_INLINE int64_t operator()(int64_t o) const { return linear_source<Acc>(*d, o).i0; }
};
template <typename Acc>
struct LinearLast {  // i0 + step: nondecreasing in o
  const Dim* d;
  KILN_HOST_DEVICE KILN_INLINE int64_t operator()(int64_t o) const {
    const Linear<Acc> s = linear_source<Acc>(*d, o);
    return s.i0 + s.step;
  }
};
// The outputs that read input i: from the first whose second source reaches i to the last whose
// first source is at most i.
template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE Span linear_outputs_of(const Dim& d, int64_t i) {
  return {first_output_at_least(d, i, LinearLast<Acc>{&d}), first_output_at_least(d, i + 1, LinearFirst<Acc>{&d})};
}
// The weight with which output o reads input i (0 when it does not).
template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE Acc linear_weight(const Linear<Acc>& s, int64_t i) {
  Acc w = Acc(0);
  if (s.i0 == i) w += s.l0;
  if (s.i0 + s.step == i) w += s.l1;
  return w;
}

// ---------------------------------------------------------------- one result element each
// Forwards read a plane of the input (x); backwards a plane of grad_output (dy) and give one
// input element's gradient. Acc: the compute type (float for 16-bit floats).

// Per-dim answers a CPU kernel computes once per call (entry i: the function of that name at
// index i); a null table is computed on the fly (CUDA, where a thread computes one element).
template <typename Acc>
struct AxisCache {
  const Span* outputs_of = nullptr;     // per input index: the outputs that read it
  const AvgSpan* avg = nullptr;         // per output: avg_window
  const Span* adaptive = nullptr;       // per output: adaptive_window
};

template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE AvgSpan avg_window_of(const Dim& d, const AxisCache<Acc>& c, int64_t o) {
  return c.avg ? c.avg[o] : avg_window(d, o);
}
template <typename Acc>
KILN_HOST_DEVICE KILN_INLINE Span adaptive_window_of(const Dim& d, const AxisCache<Acc>& c, int64_t o) {
  return c.adaptive ? c.adaptive[o] : adaptive_window(d, o);
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc avg_pool_value(const Geometry2d& g, const T* x, int64_t oh, int64_t ow,
                                                const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const AvgSpan sh = avg_window_of(g.h, ch, oh), sw = avg_window_of(g.w, cw, ow);
  if (sh.begin >= sh.end || sw.begin >= sw.end) return Acc(0);
  Acc s = 0;
  for (int64_t ih = sh.begin; ih < sh.end; ++ih)
    for (int64_t iw = sw.begin; iw < sw.end; ++iw) s += Acc(x[ih * g.w.in + iw]);
  return s / Acc(avg_divisor(g, sh, sw));
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc avg_pool_grad(const Geometry2d& g, const T* dy, int64_t ih, int64_t iw,
                                               const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const Span oh_span = ch.outputs_of ? ch.outputs_of[ih] : avg_outputs_of(g.h, ih);
  const Span ow_span = cw.outputs_of ? cw.outputs_of[iw] : avg_outputs_of(g.w, iw);
  Acc s = 0;
  for (int64_t oh = oh_span.begin; oh < oh_span.end; ++oh) {
    const AvgSpan sh = avg_window_of(g.h, ch, oh);
    for (int64_t ow = ow_span.begin; ow < ow_span.end; ++ow)
      s += Acc(dy[oh * g.w.out + ow]) / Acc(avg_divisor(g, sh, avg_window_of(g.w, cw, ow)));
  }
  return s;
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc adaptive_avg_value(const Geometry2d& g, const T* x, int64_t oh, int64_t ow,
                                                    const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const Span sh = adaptive_window_of(g.h, ch, oh), sw = adaptive_window_of(g.w, cw, ow);
  Acc s = 0;
  for (int64_t ih = sh.begin; ih < sh.end; ++ih)
    for (int64_t iw = sw.begin; iw < sw.end; ++iw) s += Acc(x[ih * g.w.in + iw]);
  return s / Acc((sh.end - sh.begin) * (sw.end - sw.begin));
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc adaptive_avg_grad(const Geometry2d& g, const T* dy, int64_t ih, int64_t iw,
                                                   const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const Span oh_span = ch.outputs_of ? ch.outputs_of[ih] : adaptive_outputs_of(g.h, ih);
  const Span ow_span = cw.outputs_of ? cw.outputs_of[iw] : adaptive_outputs_of(g.w, iw);
  Acc s = 0;
  for (int64_t oh = oh_span.begin; oh < oh_span.end; ++oh) {
    const Span sh = adaptive_window_of(g.h, ch, oh);
    for (int64_t ow = ow_span.begin; ow < ow_span.end; ++ow) {
      const Span sw = adaptive_window_of(g.w, cw, ow);
      s += Acc(dy[oh * g.w.out + ow]) / Acc((sh.end - sh.begin) * (sw.end - sw.begin));
    }
  }
  return s;
}

// The gradient of input (ih, iw) of a max pool: the outputs among oh_span x ow_span whose saved
// index (idx: the plane's indices) names it.
template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc max_pool_grad(const Geometry2d& g, const T* dy, const int64_t* idx, int64_t ih,
                                               int64_t iw, Span oh_span, Span ow_span) {
  const int64_t target = ih * g.w.in + iw;
  Acc s = 0;
  for (int64_t oh = oh_span.begin; oh < oh_span.end; ++oh)
    for (int64_t ow = ow_span.begin; ow < ow_span.end; ++ow)
      if (idx[oh * g.w.out + ow] == target) s += Acc(dy[oh * g.w.out + ow]);
  return s;
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc nearest_grad(const Geometry2d& g, const T* dy, int64_t ih, int64_t iw,
                                              const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const Span oh_span = ch.outputs_of ? ch.outputs_of[ih] : nearest_outputs_of(g.h, ih);
  const Span ow_span = cw.outputs_of ? cw.outputs_of[iw] : nearest_outputs_of(g.w, iw);
  Acc s = 0;
  for (int64_t oh = oh_span.begin; oh < oh_span.end; ++oh)
    for (int64_t ow = ow_span.begin; ow < ow_span.end; ++ow) s += Acc(dy[oh * g.w.out + ow]);
  return s;
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc bilinear_value(const Geometry2d& g, const T* x, int64_t oh, int64_t ow) {
  const Linear<Acc> sh = linear_source<Acc>(g.h, oh), sw = linear_source<Acc>(g.w, ow);
  const T* r0 = x + sh.i0 * g.w.in;
  const T* r1 = r0 + sh.step * g.w.in;
  return sh.l0 * (sw.l0 * Acc(r0[sw.i0]) + sw.l1 * Acc(r0[sw.i0 + sw.step])) +
         sh.l1 * (sw.l0 * Acc(r1[sw.i0]) + sw.l1 * Acc(r1[sw.i0 + sw.step]));
}

template <typename Acc, typename T>
KILN_HOST_DEVICE KILN_INLINE Acc bilinear_grad(const Geometry2d& g, const T* dy, int64_t ih, int64_t iw,
                                               const AxisCache<Acc>& ch = {}, const AxisCache<Acc>& cw = {}) {
  const Span oh_span = ch.outputs_of ? ch.outputs_of[ih] : linear_outputs_of<Acc>(g.h, ih);
  const Span ow_span = cw.outputs_of ? cw.outputs_of[iw] : linear_outputs_of<Acc>(g.w, iw);
  Acc s = 0;
  for (int64_t oh = oh_span.begin; oh < oh_span.end; ++oh) {
    const Acc wh = linear_weight(linear_source<Acc>(g.h, oh), ih);
    Acc row = 0;
    for (int64_t ow = ow_span.begin; ow < ow_span.end; ++ow)
      row += linear_weight(linear_source<Acc>(g.w, ow), iw) * Acc(dy[oh * g.w.out + ow]);
    s += wh * row;
  }
  return s;
}

}  // namespace kiln::pool
#endif  // KILN_KERNELS_COMMON_POOLING_INDEX_H_
