// Convolution on CUDA: through cuDNN where it is built in, loads and is enabled
// (convolution_cudnn.cpp), else as im2col + cuBLAS products, the CPU kernel's picture
// (kiln/meta/convolution.h): im2col of a chunk of samples (a thread per matrix element;
// skipped for 1x1 kernels with stride 1 and no padding), then strided-batched products over the
// samples of each group, or over the groups of each sample when there are more groups. A
// transposed convolution writes the im2col matrix and col2im gathers it back into the image (a
// thread per image element summing its taps in order: no atomics, so results repeat bit for
// bit). The weight's gradient adds the samples' products in sample order. 16-bit floats
// accumulate in float32: cuBLAS's compute type in the forward products, col2im's sum, and
// float32 copies where a sum spans several products (a transposed convolution, the weight's
// gradient).
#include <cuda_runtime.h>
#include <algorithm>
#include "gemm_into.h"
#include "convolution_cudnn.h"
#include "kiln/cuda/check.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/col2im.h"
#include "kiln/gen/kernels/cuda/convolution.h"
#include "kiln/gen/kernels/cuda/convolution_backward_weight.h"
#include "kiln/gen/kernels/cuda/im2col.h"
#include "kiln/kernel/conv_shape.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using im2col::GroupDims;
using im2col::Shape;

constexpr int kThreads = 256;
// The im2col matrices of a chunk of samples stay under this many bytes.
constexpr int64_t kColumnBytes = int64_t(256) << 20;

unsigned blocks_for(int64_t n) { return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(1) << 30)); }

// col[n][r][l] for `samples` samples: the image element under tap r % K of window l, or 0.
template <typename T>
__global__ void im2col_kernel(Shape s, const T* image, T* col, int64_t samples) {
  const int64_t K = s.kernel_numel(), L = s.col_numel(), rows = s.rows(), I = s.image_numel();
  const int64_t total = samples * rows * L;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t l = i % L, r = (i / L) % rows, n = i / (L * rows);
    const int64_t src = im2col::source(s, r % K, l);
    col[i] = src < 0 ? T(0) : image[(n * s.channels + r / K) * I + src];
  }
}

// image[n][c][pos] = the sum of its taps in col (overwrites image).
template <typename T>
__global__ void col2im_kernel(Shape s, const T* col, T* image, int64_t samples) {
  const int64_t K = s.kernel_numel(), L = s.col_numel(), I = s.image_numel();
  const int64_t total = samples * s.channels * I;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t pos = i % I, nc = i / I;  // nc = n * channels + c: its K rows start at nc * K
    image[i] = T(im2col::gather_image<opmath_t<T>>(s, col + nc * K * L, pos));
  }
}

template <typename T>
__global__ void add_bias_kernel(T* out, const T* bias, int64_t total, int64_t channels, int64_t inner) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = T(opmath_t<T>(out[i]) + opmath_t<T>(bias[(i / inner) % channels]));
}

template <typename T>
void launch_im2col(const Shape& s, const TensorBase& image, int64_t image_offset, const TensorBase& col,
                   int64_t samples, cudaStream_t stream, const char* op) {
  const int64_t total = samples * s.rows() * s.col_numel();
  if (total == 0) return;
  im2col_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
      s, static_cast<const T*>(image.data_ptr()) + image_offset, static_cast<T*>(col.data_ptr()), samples);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

template <typename T>
void launch_col2im(const Shape& s, const TensorBase& col, const TensorBase& image, int64_t image_offset,
                   int64_t samples, cudaStream_t stream, const char* op) {
  const int64_t total = samples * s.channels * s.image_numel();
  if (total == 0) return;
  col2im_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
      s, static_cast<const T*>(col.data_ptr()), static_cast<T*>(image.data_ptr()) + image_offset, samples);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

// A [batch, rows, cols] view of t's storage (strides in elements, offset from t's data).
TensorBase view3(const TensorBase& t, int64_t batch, int64_t rows, int64_t cols, int64_t batch_stride,
                 int64_t row_stride, int64_t col_stride, int64_t offset) {
  return t.as_strided_view({batch, rows, cols}, {batch_stride, row_stride, col_stride}, t.storage_offset() + offset);
}

// Samples per im2col chunk: as many whole samples' matrices as fit kColumnBytes, at least one.
int64_t samples_per_chunk(const GroupDims& d, int64_t batch, size_t element) {
  const int64_t per_sample = std::max<int64_t>(1, d.col_rows * d.L * int64_t(element));
  return std::clamp<int64_t>(kColumnBytes / per_sample, 1, std::max<int64_t>(batch, 1));
}

// small[n, g] (= or +=, per beta) = W_g @ cols[n, g] for samples [n0, n0 + nb), where cols is
// the chunk's im2col matrices (or the image itself, col_sample apart).
void products_small(const GroupDims& d, const TensorBase& small, int64_t n0, int64_t nb, const TensorBase& weight,
                    const TensorBase& cols, int64_t cols_offset, int64_t col_sample, const char* op) {
  if (d.G == 1 || nb >= d.G) {  // batched over the samples, one call per group
    for (int64_t g = 0; g < d.G; ++g)
      gemm_into(view3(small, nb, d.Ms, d.L, d.small_sample, d.L, 1, n0 * d.small_sample + g * d.Ms * d.L),
                view3(weight, nb, d.Ms, d.Kg, 0, d.Kg, 1, g * d.Ms * d.Kg),
                view3(cols, nb, d.Kg, d.L, col_sample, d.L, 1, cols_offset + g * d.Kg * d.L), Scalar(1), Scalar(0), op);
  } else {  // batched over the groups, one call per sample
    for (int64_t n = 0; n < nb; ++n)
      gemm_into(view3(small, d.G, d.Ms, d.L, d.Ms * d.L, d.L, 1, (n0 + n) * d.small_sample),
                view3(weight, d.G, d.Ms, d.Kg, d.Ms * d.Kg, d.Kg, 1, 0),
                view3(cols, d.G, d.Kg, d.L, d.Kg * d.L, d.L, 1, cols_offset + n * col_sample), Scalar(1), Scalar(0),
                op);
  }
}

// cols[n, g] = W_g^T @ small[n, g] for samples [n0, n0 + nb) (cols: the chunk's matrices, or
// the image itself when im2col is the identity).
void products_cols(const GroupDims& d, const TensorBase& cols, int64_t cols_offset, int64_t col_sample,
                   const TensorBase& small, int64_t n0, int64_t nb, const TensorBase& weight, const char* op) {
  if (d.G == 1 || nb >= d.G) {
    for (int64_t g = 0; g < d.G; ++g)
      gemm_into(view3(cols, nb, d.Kg, d.L, col_sample, d.L, 1, cols_offset + g * d.Kg * d.L),
                view3(weight, nb, d.Kg, d.Ms, 0, 1, d.Kg, g * d.Ms * d.Kg),
                view3(small, nb, d.Ms, d.L, d.small_sample, d.L, 1, n0 * d.small_sample + g * d.Ms * d.L), Scalar(1),
                Scalar(0), op);
  } else {
    for (int64_t n = 0; n < nb; ++n)
      gemm_into(view3(cols, d.G, d.Kg, d.L, d.Kg * d.L, d.L, 1, cols_offset + n * col_sample),
                view3(weight, d.G, d.Kg, d.Ms, d.Ms * d.Kg, 1, d.Kg, 0),
                view3(small, d.G, d.Ms, d.L, d.Ms * d.L, d.L, 1, (n0 + n) * d.small_sample), Scalar(1), Scalar(0), op);
  }
}

template <typename T>
void forward_small(const meta::ConvPlan& p, const TensorBase& small, const TensorBase& image, const TensorBase& weight,
                   cudaStream_t stream) {
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  if (s.is_identity()) {
    products_small(d, small, 0, p.batch, weight, image, 0, d.image_sample, "convolution");
    return;
  }
  const int64_t chunk = samples_per_chunk(d, p.batch, sizeof(T));
  TensorBase cols = kiln::detail::empty_dense({chunk, d.col_rows, d.L}, p.dtype, image.device(), "convolution");
  for (int64_t n0 = 0; n0 < p.batch; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.batch - n0);
    launch_im2col<T>(s, image, n0 * d.image_sample, cols, nb, stream, "convolution");
    products_small(d, small, n0, nb, weight, cols, 0, d.col_rows * d.L, "convolution");
  }
}

template <typename T>
void forward_image(const meta::ConvPlan& p, const TensorBase& image, const TensorBase& small, const TensorBase& weight,
                   cudaStream_t stream) {
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  if (s.is_identity()) {
    products_cols(d, image, 0, d.image_sample, small, 0, p.batch, weight, "convolution");
    return;
  }
  const int64_t chunk = samples_per_chunk(d, p.batch, sizeof(T));
  TensorBase cols = kiln::detail::empty_dense({chunk, d.col_rows, d.L}, p.dtype, image.device(), "convolution");
  for (int64_t n0 = 0; n0 < p.batch; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.batch - n0);
    products_cols(d, cols, 0, d.col_rows * d.L, small, n0, nb, weight, "convolution");
    launch_col2im<T>(s, cols, image, n0 * d.image_sample, nb, stream, "convolution");
  }
}

template <typename T>
void weight_grad(const meta::ConvPlan& p, const TensorBase& grad_weight, const TensorBase& small,
                 const TensorBase& image, cudaStream_t stream) {
  const char* op = "convolution_backward_weight";
  const Shape s = im2col::shape_of(p);
  const GroupDims d(p);
  if (p.batch == 0) {
    grad_weight.zero_();
    return;
  }
  const bool identity = s.is_identity();
  const int64_t chunk = identity ? p.batch : samples_per_chunk(d, p.batch, sizeof(T));
  TensorBase cols = identity ? image : kiln::detail::empty_dense({chunk, d.col_rows, d.L}, p.dtype, image.device(), op);
  for (int64_t n0 = 0; n0 < p.batch; n0 += chunk) {
    const int64_t nb = std::min(chunk, p.batch - n0);
    if (!identity) launch_im2col<T>(s, image, n0 * d.image_sample, cols, nb, stream, op);
    for (int64_t n = 0; n < nb; ++n) {
      const int64_t cols_offset = (identity ? n0 + n : n) * d.col_rows * d.L;
      // grad_weight[g] (+)= small[n, g] @ cols[n, g]^T, all groups in one batched call
      gemm_into(view3(grad_weight, d.G, d.Ms, d.Kg, d.Ms * d.Kg, d.Kg, 1, 0),
                view3(small, d.G, d.Ms, d.L, d.Ms * d.L, d.L, 1, (n0 + n) * d.small_sample),
                view3(cols, d.G, d.L, d.Kg, d.Kg * d.L, 1, d.L, cols_offset), Scalar(1), Scalar(n0 + n == 0 ? 0 : 1),
                op);
    }
  }
}

bool is_16bit(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

// A float32 copy of t (undefined stays undefined).
TensorBase widen(const TensorBase& t) {
  if (!t.defined()) return t;
  TensorBase w = kiln::detail::empty_dense(t.sizes(), DType::Float32, t.device(), "convolution");
  w.copy_(t);
  return w;
}

meta::ConvPlan in_float32(meta::ConvPlan p) {
  p.dtype = DType::Float32;
  return p;
}

template <typename T>
void add_bias(const TensorBase& out, const TensorBase& bias, cudaStream_t stream) {
  const int64_t total = out.numel(), channels = out.size(1), inner = total / (out.size(0) * channels);
  add_bias_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<T*>(out.data_ptr()),
                                                                  static_cast<const T*>(bias.data_ptr()), total,
                                                                  channels, inner);
  KILN_CUDA_CHECK(cudaGetLastError(), "convolution", "kernel launch");
}

}  // namespace

void convolution(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& input, const TensorBase& weight,
                 const TensorBase& bias) {
  if (out.numel() == 0) return;
  if (detail::cudnn_convolution(plan, out, input, weight)) {
    if (bias.defined()) {
      const int dev = out.device().index;
      DeviceGuard guard(dev);
      visit_dtype(plan.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (is_floating(dtype_of<T>)) add_bias<T>(out, bias, detail::current_cuda_stream(dev));
      });
    }
    return;
  }
  if (plan.transposed && is_16bit(plan.dtype)) {
    // 16-bit: the products into the im2col matrix, which col2im then sums, in float32 (one
    // rounding at the end, as the CPU; a 16-bit im2col matrix would round every tap)
    TensorBase wide = kiln::detail::empty_dense(out.sizes(), DType::Float32, out.device(), "convolution");
    convolution(in_float32(plan), wide, widen(input), widen(weight), widen(bias));
    out.copy_(wide);
    return;
  }
  const int dev = input.device().index;
  detail::check_device(dev, "convolution");
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      if (plan.transposed) forward_image<T>(plan, out, input, weight, stream);
      else forward_small<T>(plan, out, input, weight, stream);
      if (bias.defined()) add_bias<T>(out, bias, stream);
    }
  });
}

void convolution_backward_weight(const meta::ConvPlan& plan, const TensorBase& grad_weight,
                                 const TensorBase& grad_output, const TensorBase& input) {
  if (grad_weight.numel() == 0) return;
  if (detail::cudnn_convolution_backward_weight(plan, grad_weight, grad_output, input)) return;
  if (is_16bit(plan.dtype)) {  // the sum over samples in float32, rounded once
    TensorBase wide = kiln::detail::empty_dense(grad_weight.sizes(), DType::Float32, grad_weight.device(),
                                                "convolution_backward_weight");
    convolution_backward_weight(in_float32(plan), wide, widen(grad_output), widen(input));
    grad_weight.copy_(wide);
    return;
  }
  const int dev = input.device().index;
  detail::check_device(dev, "convolution_backward_weight");
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      // the small side is grad_output, or the input of a transposed convolution
      if (plan.transposed) weight_grad<T>(plan, grad_weight, input, grad_output, stream);
      else weight_grad<T>(plan, grad_weight, grad_output, input, stream);
    }
  });
}

void im2col(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  detail::check_device(dev, "im2col");
  DeviceGuard guard(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>))
      launch_im2col<T>(im2col::shape_of(plan), self, 0, out, plan.batch, detail::current_cuda_stream(dev), "im2col");
  });
}

void col2im(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  detail::check_device(dev, "col2im");
  DeviceGuard guard(dev);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>))
      launch_col2im<T>(im2col::shape_of(plan), self, out, 0, plan.batch, detail::current_cuda_stream(dev), "col2im");
  });
}

}  // namespace kiln::cuda
