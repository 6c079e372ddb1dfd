// 2-d pooling and resampling on CUDA, over the meta step's planes of H x W (kiln/meta/pooling.h):
// one thread per result element, computed by the same functions as the CPU kernels
// (kiln/common/pooling_index.h), in float for 16-bit inputs (double for double). Backwards
// gather (each input element sums the outputs that read it), so they need no atomics and are
// deterministic.
#include <cuda_runtime.h>
#include <cstdint>
#include "kiln/common/pooling_index.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/_adaptive_avg_pool2d.h"
#include "kiln/gen/kernels/cuda/_adaptive_avg_pool2d_backward.h"
#include "kiln/gen/kernels/cuda/adaptive_max_pool2d.h"
#include "kiln/gen/kernels/cuda/adaptive_max_pool2d_backward.h"
#include "kiln/gen/kernels/cuda/avg_pool2d.h"
#include "kiln/gen/kernels/cuda/avg_pool2d_backward.h"
#include "kiln/gen/kernels/cuda/max_pool2d_with_indices.h"
#include "kiln/gen/kernels/cuda/max_pool2d_with_indices_backward.h"
#include "kiln/gen/kernels/cuda/upsample_bilinear2d.h"
#include "kiln/gen/kernels/cuda/upsample_bilinear2d_backward.h"
#include "kiln/gen/kernels/cuda/upsample_nearest2d.h"
#include "kiln/gen/kernels/cuda/upsample_nearest2d_backward.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using pool::Geometry2d;
using pool::Span;

template <typename T>
using acc_t = opmath_t<T>;

constexpr int kThreads = 256;

#define KILN_POOL_LOOP(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// Which element a kernel computes: forward kinds write outputs, backward kinds inputs' gradients.
enum class Kind {
  AvgValue,
  AvgGrad,
  AdaptiveAvgValue,
  AdaptiveAvgGrad,
  NearestValue,
  NearestGrad,
  BilinearValue,
  BilinearGrad
};

template <Kind K>
constexpr bool kBackward =
    K == Kind::AvgGrad || K == Kind::AdaptiveAvgGrad || K == Kind::NearestGrad || K == Kind::BilinearGrad;

// y[p][r][c] for every plane p of the result: forwards read x's plane p at output (r, c),
// backwards grad_output's plane p at input (r, c).
template <Kind K, typename T>
__global__ void pool_kernel(Geometry2d g, const T* x, T* y, int64_t total) {
  using Acc = acc_t<T>;
  const int64_t rows = kBackward<K> ? g.h.in : g.h.out, cols = kBackward<K> ? g.w.in : g.w.out;
  const int64_t src_plane = kBackward<K> ? g.h.out * g.w.out : g.h.in * g.w.in;
  KILN_POOL_LOOP(i, total) {
    const int64_t c = i % cols, r = (i / cols) % rows, p = i / (cols * rows);
    const T* src = x + p * src_plane;
    Acc v;
    if constexpr (K == Kind::AvgValue) v = pool::avg_pool_value<Acc>(g, src, r, c);
    else if constexpr (K == Kind::AvgGrad) v = pool::avg_pool_grad<Acc>(g, src, r, c);
    else if constexpr (K == Kind::AdaptiveAvgValue) v = pool::adaptive_avg_value<Acc>(g, src, r, c);
    else if constexpr (K == Kind::AdaptiveAvgGrad) v = pool::adaptive_avg_grad<Acc>(g, src, r, c);
    else if constexpr (K == Kind::NearestValue)
      v = Acc(src[pool::nearest_source(g.h, r) * g.w.in + pool::nearest_source(g.w, c)]);
    else if constexpr (K == Kind::NearestGrad) v = pool::nearest_grad<Acc>(g, src, r, c);
    else if constexpr (K == Kind::BilinearValue) v = pool::bilinear_value<Acc>(g, src, r, c);
    else v = pool::bilinear_grad<Acc>(g, src, r, c);
    y[i] = T(v);
  }
}

// Max pools, windowed (adaptive = false: kernel, stride, padding, dilation) or adaptive.
template <bool Adaptive, typename T>
__global__ void max_pool_kernel(Geometry2d g, const T* x, T* y, int64_t* indices, int64_t total) {
  using Acc = acc_t<T>;
  KILN_POOL_LOOP(i, total) {
    const int64_t ow = i % g.w.out, oh = (i / g.w.out) % g.h.out, p = i / (g.w.out * g.h.out);
    const Span sh = Adaptive ? pool::adaptive_window(g.h, oh) : pool::max_window(g.h, oh);
    const Span sw = Adaptive ? pool::adaptive_window(g.w, ow) : pool::max_window(g.w, ow);
    Acc v;
    int64_t k;
    pool::max_over<Acc>(x + p * g.h.in * g.w.in, g.w.in, sh, Adaptive ? 1 : g.h.dilation, sw,
                        Adaptive ? 1 : g.w.dilation, &v, &k);
    y[i] = T(v);
    indices[i] = k;
  }
}

template <bool Adaptive, typename T>
__global__ void max_pool_grad_kernel(Geometry2d g, const T* dy, const int64_t* indices, T* dx, int64_t total) {
  using Acc = acc_t<T>;
  KILN_POOL_LOOP(i, total) {
    const int64_t iw = i % g.w.in, ih = (i / g.w.in) % g.h.in, p = i / (g.w.in * g.h.in);
    const Span oh = Adaptive ? pool::adaptive_outputs_of(g.h, ih) : pool::max_outputs_of(g.h, ih);
    const Span ow = Adaptive ? pool::adaptive_outputs_of(g.w, iw) : pool::max_outputs_of(g.w, iw);
    const int64_t plane = p * g.h.out * g.w.out;
    dx[i] = T(pool::max_pool_grad<Acc>(g, dy + plane, indices + plane, ih, iw, oh, ow));
  }
}

unsigned blocks_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16);  // the grid-stride loop covers the rest
}

// Runs pool_kernel<K> over `result`'s elements (an empty result launches nothing).
template <Kind K>
void launch(const char* op, const meta::Pool2dPlan& plan, const TensorBase& result, const TensorBase& source) {
  const int64_t total = result.numel();
  if (total == 0) return;
  const int dev = source.device().index;
  detail::check_device(dev, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {  // the registry admits floating dtypes only
      pool_kernel<K, T><<<blocks_for(total), kThreads, 0, detail::current_cuda_stream(dev)>>>(
          plan.geometry, static_cast<const T*>(source.data_ptr()), static_cast<T*>(result.data_ptr()), total);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

template <bool Adaptive>
void launch_max(const char* op, const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                const TensorBase& self) {
  const int64_t total = output.numel();
  if (total == 0) return;
  const int dev = self.device().index;
  detail::check_device(dev, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      max_pool_kernel<Adaptive, T><<<blocks_for(total), kThreads, 0, detail::current_cuda_stream(dev)>>>(
          plan.geometry, static_cast<const T*>(self.data_ptr()), static_cast<T*>(output.data_ptr()),
          static_cast<int64_t*>(indices.data_ptr()), total);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

template <bool Adaptive>
void launch_max_grad(const char* op, const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                     const TensorBase& grad_output, const TensorBase& indices) {
  const int64_t total = grad_input.numel();
  if (total == 0) return;
  const int dev = grad_output.device().index;
  detail::check_device(dev, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      max_pool_grad_kernel<Adaptive, T><<<blocks_for(total), kThreads, 0, detail::current_cuda_stream(dev)>>>(
          plan.geometry, static_cast<const T*>(grad_output.data_ptr()), static_cast<const int64_t*>(indices.data_ptr()),
          static_cast<T*>(grad_input.data_ptr()), total);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

}  // namespace

void max_pool2d_with_indices(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                             const TensorBase& self) {
  launch_max<false>("max_pool2d_with_indices", plan, output, indices, self);
}

void max_pool2d_with_indices_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                      const TensorBase& grad_output, const TensorBase& /*self*/,
                                      const TensorBase& indices) {
  launch_max_grad<false>("max_pool2d_with_indices_backward", plan, grad_input, grad_output, indices);
}

void adaptive_max_pool2d(const meta::Pool2dPlan& plan, const TensorBase& output, const TensorBase& indices,
                         const TensorBase& self) {
  launch_max<true>("adaptive_max_pool2d", plan, output, indices, self);
}

void adaptive_max_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& grad_input,
                                  const TensorBase& grad_output, const TensorBase& /*self*/,
                                  const TensorBase& indices) {
  launch_max_grad<true>("adaptive_max_pool2d_backward", plan, grad_input, grad_output, indices);
}

void avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  launch<Kind::AvgValue>("avg_pool2d", plan, out, self);
}

void avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                         const TensorBase& /*self*/) {
  launch<Kind::AvgGrad>("avg_pool2d_backward", plan, out, grad_output);
}

void _adaptive_avg_pool2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  launch<Kind::AdaptiveAvgValue>("_adaptive_avg_pool2d", plan, out, self);
}

void _adaptive_avg_pool2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output,
                                   const TensorBase& /*self*/) {
  launch<Kind::AdaptiveAvgGrad>("_adaptive_avg_pool2d_backward", plan, out, grad_output);
}

void upsample_nearest2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  launch<Kind::NearestValue>("upsample_nearest2d", plan, out, self);
}

void upsample_nearest2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  launch<Kind::NearestGrad>("upsample_nearest2d_backward", plan, out, grad_output);
}

void upsample_bilinear2d(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& self) {
  launch<Kind::BilinearValue>("upsample_bilinear2d", plan, out, self);
}

void upsample_bilinear2d_backward(const meta::Pool2dPlan& plan, const TensorBase& out, const TensorBase& grad_output) {
  launch<Kind::BilinearGrad>("upsample_bilinear2d_backward", plan, out, grad_output);
}

}  // namespace kiln::cuda
