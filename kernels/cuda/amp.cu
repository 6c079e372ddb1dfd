// The amp ops on CUDA, as PyTorch 1.13's kernels (aten/src/ATen/native/cuda/AmpKernels.cu):
// the unscale is one launch per tensor (a grid-stride loop, one pass: each element is checked
// and multiplied), and found_inf is set on the device with a plain store of 1.0 (every writer
// writes the same value, so no atomic and no host read); the scale update is one thread.
#include <cuda_runtime.h>
#include <cmath>
#include "plan/reduce_plan.h"
#include "kiln/common/foreach_index.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/amp_non_finite_check_and_unscale.h"
#include "kiln/gen/kernels/cuda/amp_update_scale.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
using amp_math_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// A dense run of n elements (any permutation of a contiguous tensor).
template <typename T>
__global__ void unscale_dense_kernel(T* p, int64_t n, float* found_inf, const float* inv_scale) {
  using M = amp_math_t<T>;
  const M inv = M(*inv_scale);  // every thread reads it: it hits in cache
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const M v = M(p[i]);
    if (!isfinite(v)) *found_inf = 1.0f;
    p[i] = T(v * inv);
  }
}

// Any other layout: linear index -> element offset.
template <typename T>
__global__ void unscale_strided_kernel(T* p, foreach_index::StridedIndex ix, int64_t n, float* found_inf,
                                       const float* inv_scale) {
  using M = amp_math_t<T>;
  const M inv = M(*inv_scale);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T& x = p[ix.offset(i)];
    const M v = M(x);
    if (!isfinite(v)) *found_inf = 1.0f;
    x = T(v * inv);
  }
}

__global__ void update_scale_kernel(float* scale, int32_t* tracker, const float* found_inf, double growth_factor,
                                    double backoff_factor, int64_t growth_interval) {
  if (*found_inf) {
    *scale = float(double(*scale) * backoff_factor);
    *tracker = 0;
  } else {
    const int64_t successful = int64_t(*tracker) + 1;
    if (successful == growth_interval) {
      const float grown = float(double(*scale) * growth_factor);
      if (isfinite(grown)) *scale = grown;  // never grow into inf
      *tracker = 0;
    } else {
      *tracker = int32_t(successful);
    }
  }
}

template <typename T>
void unscale_one(const TensorBase& t, float* found_inf, const float* inv_scale, cudaStream_t stream) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  const int64_t n = t.numel();
  if (n == 0) return;
  foreach_index::StridedIndex ix;
  KILN_CHECK(foreach_index::make_index(int(t.dim()), t.sizes().data(), t.strides().data(), ix), NotImplementedError, op,
             "self", "a tensor with more than ", foreach_index::kMaxDims, " dims of size > 1");
  const unsigned blocks = unsigned(foreach_index::grid_blocks(n, kThreads, cuda_plan::kMaxGridBlocks));
  T* base = static_cast<T*>(t.data_ptr());
  int64_t lowest = 0;
  if (foreach_index::dense_span(ix, &lowest)) {
    unscale_dense_kernel<T><<<blocks, kThreads, 0, stream>>>(base + lowest, n, found_inf, inv_scale);
  } else {
    unscale_strided_kernel<T><<<blocks, kThreads, 0, stream>>>(base, ix, n, found_inf, inv_scale);
  }
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

}  // namespace

void amp_non_finite_check_and_unscale(const meta::ForeachPlan& plan, const TensorBaseList& self,
                                      const TensorBase& found_inf, const TensorBase& inv_scale) {
  if (plan.length == 0) return;
  detail::check_device(plan.device.index, "_amp_foreach_non_finite_check_and_unscale_");
  DeviceGuard guard(plan.device.index);
  cudaStream_t stream = detail::current_cuda_stream(plan.device.index);
  float* found = static_cast<float*>(found_inf.data_ptr());
  const float* inv = static_cast<const float*>(inv_scale.data_ptr());
  for (const TensorBase& t : self) {
    visit_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (is_floating(dtype_of<T>)) unscale_one<T>(t, found, inv, stream);  // the entry admits these only
    });
  }
}

void amp_update_scale(const meta::AmpUpdateScalePlan& plan, const TensorBase& self, const TensorBase& growth_tracker,
                      const TensorBase& found_inf, double scale_growth_factor, double scale_backoff_factor,
                      int64_t growth_interval) {
  detail::check_device(plan.device.index, "_amp_update_scale_");
  DeviceGuard guard(plan.device.index);
  update_scale_kernel<<<1, 1, 0, detail::current_cuda_stream(plan.device.index)>>>(
      static_cast<float*>(self.data_ptr()), static_cast<int32_t*>(growth_tracker.data_ptr()),
      static_cast<const float*>(found_inf.data_ptr()), scale_growth_factor, scale_backoff_factor, growth_interval);
  KILN_CUDA_CHECK(cudaGetLastError(), "_amp_update_scale_", "kernel launch");
}

}  // namespace kiln::cuda
