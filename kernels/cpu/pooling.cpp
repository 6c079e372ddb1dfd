// 2-d pooling and resampling on CPU, over the meta step's planes of H x W (kiln/meta/pooling.h).
// Each result element is computed on its own from the index math shared with CUDA
// (kiln/common/pooling_index.h), in float for 16-bit inputs. Backwards gather: each input
// element sums the outputs that read it, in output order, so the result does not depend on the
// thread count. Threads split the (plane, row) pairs of the result.
#include <cstdint>
#include <utility>
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

// Max pooling forwards (windowed and adaptive) write values and indices together.
template <typename T, typename Spans>
void max_forward(const Geometry2d& g, const TensorBase& output, const TensorBase& indices, const TensorBase& self,
                 int64_t step_h, int64_t step_w, int64_t work, const Spans& spans) {
  using Acc = opmath_t<T>;
  const T* x = data_of<T>(self);
  T* y = out_of<T>(output);
  int64_t* idx = out_of<int64_t>(indices);
  each_result(g.planes, g.h.out, g.w.out, work, [&](int64_t p, int64_t oh, int64_t ow, int64_t at) {
    Acc v;
    int64_t k;
    const std::pair<Span, Span> s = spans(oh, ow);
    pool::max_over<Acc>(x + p * in_plane(g), g.w.in, s.first, step_h, s.second, step_w, &v, &k);
    y[at] = T(v);
    idx[at] = k;
  });
}

// grad_input[i] = sum of grad_output over the outputs (among `outputs_of`'s) whose index is i.
template <typename T, typename Outputs>
void max_backward(const Geometry2d& g, const TensorBase& grad_input, const TensorBase& grad_output,
                  const TensorBase& indices, const Outputs& outputs_of) {
  const int64_t* idx = data_of<int64_t>(indices);
  backward<T>(g, grad_input, grad_output, 4, [&](const T* dy, int64_t p, int64_t ih, int64_t iw) {
    const std::pair<Span, Span> s = outputs_of(ih, iw);
    return pool::max_pool_grad<opmath_t<T>>(g, dy, idx + p * out_plane(g), ih, iw, s.first, s.second);
  });
}

// The work per result of an adaptive pool: about one window.
int64_t adaptive_work(const Geometry2d& g) {
  return ((g.h.in + g.h.out - 1) / g.h.out + 1) * ((g.w.in + g.w.out - 1) / g.w.out + 1);
}

// An op whose result element is one function of the plane it reads (forward: the input's plane
// at an output (r, c); backward: grad_output's plane at an input (r, c)).
#define KILN_POOL_FORWARD(fn, work)                                                                                  \
  visit_floating(plan.dtype, [&](auto tag) {                                                                         \
    using T = decltype(tag);                                                                                         \
    forward<T>(plan.geometry, out, self, (work),                                                                     \
               [&](const T* x, int64_t oh, int64_t ow) { return pool::fn<opmath_t<T>>(plan.geometry, x, oh, ow); }); \
  })
#define KILN_POOL_BACKWARD(fn, work)                                                                         \
  visit_floating(plan.dtype, [&](auto tag) {                                                                 \
    using T = decltype(tag);                                                                                 \
    backward<T>(plan.geometry, out, grad_output, (work), [&](const T* dy, int64_t, int64_t ih, int64_t iw) { \
      return pool::fn<opmath_t<T>>(plan.geometry, dy, ih, iw);                                               \
    });                                                                                                      \
  })

}  // namespace

void max_pool2d_with_indices(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                             const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    max_forward<T>(g, output, indices, self, g.h.dilation, g.w.dilation, g.h.kernel * g.w.kernel,
                   [&](int64_t oh, int64_t ow) {
                     return std::pair{pool::max_window(g.h, oh), pool::max_window(g.w, ow)};
                   });
  });
}

void max_pool2d_with_indices_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                      const TensorBase& grad_output, const TensorBase& /*self*/,
                                      const TensorBase& indices) {
  const Geometry2d& g = plan.geometry;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    max_backward<T>(g, grad_input, grad_output, indices, [&](int64_t ih, int64_t iw) {
      return std::pair{pool::max_outputs_of(g.h, ih), pool::max_outputs_of(g.w, iw)};
    });
  });
}

void adaptive_max_pool2d(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                         const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  if (g.h.out == 0 || g.w.out == 0) return;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    max_forward<T>(g, output, indices, self, 1, 1, adaptive_work(g), [&](int64_t oh, int64_t ow) {
      return std::pair{pool::adaptive_window(g.h, oh), pool::adaptive_window(g.w, ow)};
    });
  });
}

void adaptive_max_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                  const TensorBase& grad_output, const TensorBase& /*self*/,
                                  const TensorBase& indices) {
  const Geometry2d& g = plan.geometry;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    max_backward<T>(g, grad_input, grad_output, indices, [&](int64_t ih, int64_t iw) {
      return std::pair{pool::adaptive_outputs_of(g.h, ih), pool::adaptive_outputs_of(g.w, iw)};
    });
  });
}

void avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  KILN_POOL_FORWARD(avg_pool_value, plan.geometry.h.kernel * plan.geometry.w.kernel);
}

void avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                         const TensorBase& /*self*/) {
  const Geometry2d& g = plan.geometry;
  KILN_POOL_BACKWARD(avg_pool_grad, (g.h.kernel / g.h.stride + 1) * (g.w.kernel / g.w.stride + 1));
}

void _adaptive_avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (plan.geometry.h.out == 0 || plan.geometry.w.out == 0) return;
  KILN_POOL_FORWARD(adaptive_avg_value, adaptive_work(plan.geometry));
}

void _adaptive_avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                                   const TensorBase& /*self*/) {
  KILN_POOL_BACKWARD(adaptive_avg_grad, 4);
}

void upsample_nearest2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  const Geometry2d& g = plan.geometry;
  visit_floating(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = data_of<T>(self);
    T* y = out_of<T>(out);
    each_result(g.planes, g.h.out, g.w.out, 1, [&](int64_t p, int64_t oh, int64_t ow, int64_t at) {
      y[at] = x[p * in_plane(g) + pool::nearest_source(g.h, oh) * g.w.in + pool::nearest_source(g.w, ow)];
    });
  });
}

void upsample_nearest2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  const Geometry2d& g = plan.geometry;
  KILN_POOL_BACKWARD(nearest_grad, (g.h.out / g.h.in + 1) * (g.w.out / g.w.in + 1));
}

void upsample_bilinear2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  KILN_POOL_FORWARD(bilinear_value, 4);
}

void upsample_bilinear2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  const Geometry2d& g = plan.geometry;
  KILN_POOL_BACKWARD(bilinear_grad, (g.h.out / g.h.in + 2) * (g.w.out / g.w.in + 2));
}

#undef KILN_POOL_FORWARD
#undef KILN_POOL_BACKWARD

}  // namespace kiln::cpu
