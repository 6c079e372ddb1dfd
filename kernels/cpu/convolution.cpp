// Convolution on CPU as im2col + OpenBLAS products (kiln/meta/convolution.h has the picture):
// per sample, the image's im2col matrix (skipped for 1x1 kernels with stride 1 and no padding,
// where it is the image itself), then one product per group. A transposed convolution is the
// adjoint: products into the im2col matrix, then col2im adds it into the image. The weight's
// gradient sums the samples' products in sample order, so it does not depend on threads.
// float16/bfloat16 run the float32 path on widened copies (OpenBLAS has no 16-bit product).
// float32 goes to oneDNN where CMake found it (onednn_conv.h; libtorch's CPU convolutions): on
// conv2d [16,64,56,56] x [64,64,3,3] this path reached 0.93x (1 thread) and 0.72x (2 threads)
// of libtorch, oneDNN about 1.0x (BENCHMARKS.md).
#include <algorithm>
#include <vector>
#include "gemm.h"
#include "kernel_utils.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/col2im.h"
#include "kiln/gen/kernels/cpu/convolution.h"
#include "kiln/gen/kernels/cpu/convolution_backward_weight.h"
#include "kiln/gen/kernels/cpu/im2col.h"
#include "kiln/kernel/conv_shape.h"
#include "onednn_conv.h"

namespace kiln::cpu {
namespace {

using im2col::GroupDims;
using im2col::Shape;

// The windows o in [0, n) whose tap at base + o * stride lands inside [0, size): [lo, hi).
void inside_range(int64_t base, int64_t stride, int64_t size, int64_t n, int64_t& lo, int64_t& hi) {
  lo = base >= 0 ? 0 : (-base + stride - 1) / stride;
  hi = base > size - 1 ? 0 : (size - 1 - base) / stride + 1;
  lo = std::min(lo, n);
  hi = std::clamp(hi, lo, n);
}

// Rows [r0, r1) of one sample's im2col matrix.
template <typename T>
void im2col_rows(const Shape& s, const T* image, T* col, int64_t r0, int64_t r1) {
  const int64_t K = s.kernel_numel(), L = s.col_numel(), I = s.image_numel();
  for (int64_t r = r0; r < r1; ++r) {
    const T* src = image + (r / K) * I;
    T* dst = col + r * L;
    const int64_t k = r % K;
    const int64_t k2 = k % s.kernel[2], k1 = (k / s.kernel[2]) % s.kernel[1], k0 = k / (s.kernel[2] * s.kernel[1]);
    const int64_t b2 = k2 * s.dilation[2] - s.padding[2];
    int64_t lo2, hi2;
    inside_range(b2, s.stride[2], s.image[2], s.cols[2], lo2, hi2);
    for (int64_t o0 = 0; o0 < s.cols[0]; ++o0) {
      const int64_t i0 = o0 * s.stride[0] - s.padding[0] + k0 * s.dilation[0];
      for (int64_t o1 = 0; o1 < s.cols[1]; ++o1, dst += s.cols[2]) {
        const int64_t i1 = o1 * s.stride[1] - s.padding[1] + k1 * s.dilation[1];
        if (i0 < 0 || i0 >= s.image[0] || i1 < 0 || i1 >= s.image[1]) {
          std::fill(dst, dst + s.cols[2], T(0));
          continue;
        }
        const T* line = src + (i0 * s.image[1] + i1) * s.image[2] + b2;
        std::fill(dst, dst + lo2, T(0));
        if (s.stride[2] == 1) {
          std::copy(line + lo2, line + hi2, dst + lo2);
        } else {
          for (int64_t o2 = lo2; o2 < hi2; ++o2) dst[o2] = line[o2 * s.stride[2]];
        }
        std::fill(dst + hi2, dst + s.cols[2], T(0));
      }
    }
  }
}

// image (one sample, all channels) += col2im(col), channels [c0, c1); each channel's taps in order.
template <typename T>
void col2im_channels(const Shape& s, const T* col, T* image, int64_t c0, int64_t c1) {
  const int64_t K = s.kernel_numel(), L = s.col_numel(), I = s.image_numel();
  for (int64_t c = c0; c < c1; ++c) {
    T* dst_channel = image + c * I;
    for (int64_t k = 0; k < K; ++k) {
      const T* src = col + (c * K + k) * L;
      const int64_t k2 = k % s.kernel[2], k1 = (k / s.kernel[2]) % s.kernel[1], k0 = k / (s.kernel[2] * s.kernel[1]);
      const int64_t b2 = k2 * s.dilation[2] - s.padding[2];
      int64_t lo2, hi2;
      inside_range(b2, s.stride[2], s.image[2], s.cols[2], lo2, hi2);
      for (int64_t o0 = 0; o0 < s.cols[0]; ++o0) {
        const int64_t i0 = o0 * s.stride[0] - s.padding[0] + k0 * s.dilation[0];
        for (int64_t o1 = 0; o1 < s.cols[1]; ++o1, src += s.cols[2]) {
          const int64_t i1 = o1 * s.stride[1] - s.padding[1] + k1 * s.dilation[1];
          if (i0 < 0 || i0 >= s.image[0] || i1 < 0 || i1 >= s.image[1]) continue;
          T* line = dst_channel + (i0 * s.image[1] + i1) * s.image[2] + b2;
          for (int64_t o2 = lo2; o2 < hi2; ++o2) line[o2 * s.stride[2]] += src[o2];
        }
      }
    }
  }
}

template <typename T>
void im2col_sample(const Shape& s, const T* image, T* col) {
  const int64_t rows = s.rows();
  kiln::detail::parallel_chunks(rows, kiln::detail::threads_for(rows * s.col_numel(), rows), 1,
                                [&](int64_t r0, int64_t r1) { im2col_rows(s, image, col, r0, r1); });
}

// image = col2im(col) for one sample (image is overwritten).
template <typename T>
void col2im_sample(const Shape& s, const T* col, T* image) {
  std::fill(image, image + s.channels * s.image_numel(), T(0));
  kiln::detail::parallel_chunks(s.channels, kiln::detail::threads_for(s.rows() * s.col_numel(), s.channels), 1,
                                [&](int64_t c0, int64_t c1) { col2im_channels(s, col, image, c0, c1); });
}

template <typename T>
void add_bias(T* out, const T* bias, int64_t batch, int64_t channels, int64_t inner) {
  const int64_t planes = batch * channels;
  kiln::detail::parallel_chunks(planes, kiln::detail::threads_for(planes * inner, planes), 1,
                                [&](int64_t p0, int64_t p1) {
                                  for (int64_t p = p0; p < p1; ++p) {
                                    const T b = bias[p % channels];
                                    T* row = out + p * inner;
                                    for (int64_t i = 0; i < inner; ++i) row[i] += b;
                                  }
                                });
}

// small = W @ im2col(image) (+ bias) per sample and group (convolution; a transposed one's
// input gradient). Returns whether it added the bias (oneDNN does, in the same pass).
template <typename T>
bool forward_small(const meta::ConvPlan& p, T* small, const T* image, const T* weight, [[maybe_unused]] const T* bias) {
#ifdef KILN_HAVE_ONEDNN
  if constexpr (std::is_same_v<T, float>)
    if (onednn::small_from_image(p, small, image, weight, bias)) return true;
#endif
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  const bool identity = s.is_identity();
  std::vector<T> col(identity ? 0 : size_t(s.rows() * d.L));
  for (int64_t n = 0; n < p.batch; ++n) {
    const T* image_n = image + n * d.image_sample;
    if (!identity) im2col_sample(s, image_n, col.data());
    const T* cols = identity ? image_n : col.data();
    for (int64_t g = 0; g < d.G; ++g)
      gemm<T>(d.Ms, d.L, d.Kg, Scalar(1), MatRef<T>{weight + g * d.Ms * d.Kg, d.Kg, 1},
              MatRef<T>{cols + g * d.Kg * d.L, d.L, 1}, Scalar(0), small + n * d.small_sample + g * d.Ms * d.L, d.L);
  }
  return false;
}

// image = col2im(W^T @ small) per sample and group (a transposed convolution; convolution's input gradient).
template <typename T>
void forward_image(const meta::ConvPlan& p, T* image, const T* small, const T* weight) {
#ifdef KILN_HAVE_ONEDNN
  if constexpr (std::is_same_v<T, float>)
    if (onednn::image_from_small(p, image, small, weight)) return;
#endif
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  const bool identity = s.is_identity();
  std::vector<T> col(identity ? 0 : size_t(s.rows() * d.L));
  for (int64_t n = 0; n < p.batch; ++n) {
    T* cols = identity ? image + n * d.image_sample : col.data();
    for (int64_t g = 0; g < d.G; ++g)
      gemm<T>(d.Kg, d.L, d.Ms, Scalar(1), MatRef<T>{weight + g * d.Ms * d.Kg, 1, d.Kg},
              MatRef<T>{small + n * d.small_sample + g * d.Ms * d.L, d.L, 1}, Scalar(0), cols + g * d.Kg * d.L, d.L);
    if (!identity) col2im_sample(s, col.data(), image + n * d.image_sample);
  }
}

// grad_weight = sum over samples of small @ im2col(image)^T, per group.
template <typename T>
void weight_grad(const meta::ConvPlan& p, T* grad_weight, const T* small, const T* image) {
#ifdef KILN_HAVE_ONEDNN
  if constexpr (std::is_same_v<T, float>)
    if (onednn::weight_grad(p, grad_weight, small, image)) return;
#endif
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  const bool identity = s.is_identity();
  std::vector<T> col(identity ? 0 : size_t(s.rows() * d.L));
  if (p.batch == 0) std::fill(grad_weight, grad_weight + d.G * d.Ms * d.Kg, T(0));
  for (int64_t n = 0; n < p.batch; ++n) {
    const T* image_n = image + n * d.image_sample;
    if (!identity) im2col_sample(s, image_n, col.data());
    const T* cols = identity ? image_n : col.data();
    for (int64_t g = 0; g < d.G; ++g)
      gemm<T>(d.Ms, d.Kg, d.L, Scalar(1), MatRef<T>{small + n * d.small_sample + g * d.Ms * d.L, d.L, 1},
              MatRef<T>{cols + g * d.Kg * d.L, 1, d.L}, Scalar(n == 0 ? 0 : 1), grad_weight + g * d.Ms * d.Kg, d.Kg);
  }
}

template <typename T>
T* ptr(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

// Runs fn with float32 copies of 16-bit tensors (results copied back), the tensors themselves otherwise.
template <typename Fn>
void in_compute_dtype(const TensorBase& result, std::initializer_list<TensorBase> inputs, const Fn& fn) {
  std::vector<TensorBase> args(inputs);
  const DType dt = result.dtype();
  if (dt != DType::Float16 && dt != DType::BFloat16) {
    visit_dtype(dt, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) fn(T(0), result, args);
    });
    return;
  }
  for (TensorBase& a : args)
    if (a.defined()) {
      TensorBase wide = kiln::detail::empty_dense(a.sizes(), DType::Float32, a.device(), "convolution");
      wide.copy_(a);
      a = wide;
    }
  TensorBase wide_result = kiln::detail::empty_dense(result.sizes(), DType::Float32, result.device(), "convolution");
  fn(float(0), wide_result, args);
  result.copy_(wide_result);
}

}  // namespace

void convolution(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& input, const TensorBase& weight,
                 const TensorBase& bias) {
  if (out.numel() == 0) return;
  in_compute_dtype(out, {input, weight, bias}, [&](auto zero, const TensorBase& o, const std::vector<TensorBase>& a) {
    using T = decltype(zero);
    const T* bias = a[2].defined() ? ptr<T>(a[2]) : nullptr;
    bool bias_added = false;
    if (plan.transposed) forward_image<T>(plan, ptr<T>(o), ptr<T>(a[0]), ptr<T>(a[1]));
    else bias_added = forward_small<T>(plan, ptr<T>(o), ptr<T>(a[0]), ptr<T>(a[1]), bias);
    if (bias && !bias_added)
      add_bias<T>(ptr<T>(o), ptr<T>(a[2]), o.size(0), o.size(1), o.numel() / (o.size(0) * o.size(1)));
  });
}

void convolution_backward_weight(const meta::ConvPlan& plan, const TensorBase& grad_weight,
                                 const TensorBase& grad_output, const TensorBase& input) {
  if (grad_weight.numel() == 0) return;
  in_compute_dtype(grad_weight, {grad_output, input},
                   [&](auto zero, const TensorBase& gw, const std::vector<TensorBase>& a) {
                     using T = decltype(zero);
                     // the small side is grad_output, or the input of a transposed convolution
                     const TensorBase& small = plan.transposed ? a[1] : a[0];
                     const TensorBase& image = plan.transposed ? a[0] : a[1];
                     weight_grad<T>(plan, ptr<T>(gw), ptr<T>(small), ptr<T>(image));
                   });
}

void im2col(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  const Shape s = im2col::shape_of(plan);
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (is_float_like_v<T>) {  // the entry admits floating dtypes only
      const int64_t in_sample = s.channels * s.image_numel(), out_sample = s.rows() * s.col_numel();
      for (int64_t n = 0; n < plan.batch; ++n)
        im2col_sample(s, ptr<T>(self) + n * in_sample, ptr<T>(out) + n * out_sample);
    }
  });
}

void col2im(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  const Shape s = im2col::shape_of(plan);
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (is_reduced_float_v<T>) {  // sum in float32, as the convolutions do
      TensorBase wide_in = kiln::detail::empty_dense(self.sizes(), DType::Float32, self.device(), "col2im");
      wide_in.copy_(self);
      TensorBase wide_out = kiln::detail::empty_dense(out.sizes(), DType::Float32, out.device(), "col2im");
      col2im(plan, wide_out, wide_in);
      out.copy_(wide_out);
    } else if constexpr (std::is_floating_point_v<T>) {
      const int64_t in_sample = s.rows() * s.col_numel(), out_sample = s.channels * s.image_numel();
      for (int64_t n = 0; n < plan.batch; ++n)
        col2im_sample(s, ptr<T>(self) + n * in_sample, ptr<T>(out) + n * out_sample);
    }
  });
}

}  // namespace kiln::cpu
