// arange, linspace, logspace and eye on CUDA: one grid-stride kernel writes element i of the
// new contiguous result from the formulas the CPU uses (kiln/common/factory_values.h), so
// nothing is computed on the host and copied.
#include <cuda_runtime.h>
#include <algorithm>
#include "kiln/common/factory_values.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/arange.h"
#include "kiln/gen/kernels/cuda/eye.h"
#include "kiln/gen/kernels/cuda/linspace.h"
#include "kiln/gen/kernels/cuda/logspace.h"

namespace kiln::cuda {
namespace {

template <typename T, typename F>
__global__ void fill_indexed_kernel(T* out, int64_t n, F value) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = value(i);
}

// Launches out[i] = value(i) on out's device and current stream.
template <typename T, typename F>
void fill_indexed(const TensorBase& out, const F& value, const char* op) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int dev = out.device().index;
  detail::check_device(dev, op);
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  constexpr int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, int64_t(detail::sm_count(dev)) * 8);
  fill_indexed_kernel<T><<<unsigned(blocks), threads, 0, stream>>>(static_cast<T*>(out.data_ptr()), n, value);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

template <typename T>
struct RangeValue {
  int64_t int_start, int_step;
  double start, step;
  __device__ T operator()(int64_t i) const { return factory::range_value<T>(i, int_start, int_step, start, step); }
};

template <typename T, typename C>
struct LinspaceValue {
  factory::LinspaceArgs<C> args;
  __device__ T operator()(int64_t i) const { return factory::linspace_value<T>(i, args); }
};

template <typename T, typename C>
struct LogspaceValue {
  factory::LinspaceArgs<C> args;
  C base;
  __device__ T operator()(int64_t i) const { return factory::logspace_value<T>(i, args, base); }
};

template <typename T>
struct EyeValue {
  int64_t m;
  __device__ T operator()(int64_t i) const { return i / m == i % m ? T(1) : T(0); }
};

}  // namespace

void arange(const meta::RangePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T> && !std::is_same_v<T, bool>)  // the meta step refuses both
      fill_indexed<T>(out, RangeValue<T>{plan.int_start, plan.int_step, plan.start, plan.step}, "arange");
  });
}

void linspace(const meta::LinspacePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = factory::linspace_step_t<T>;
      const auto args = factory::linspace_args<T>(plan.start.to<opmath_t<T>>(), plan.end.to<opmath_t<T>>(), plan.steps);
      fill_indexed<T>(out, LinspaceValue<T, C>{args}, "linspace");
    }
  });
}

void logspace(const meta::LinspacePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = factory::linspace_step_t<T>;
      const auto args = factory::linspace_args<T>(plan.start.to<opmath_t<T>>(), plan.end.to<opmath_t<T>>(), plan.steps);
      fill_indexed<T>(out, LogspaceValue<T, C>{args, C(plan.base)}, "logspace");
    }
  });
}

void eye(const meta::EyePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    fill_indexed<T>(out, EyeValue<T>{plan.sizes[1]}, "eye");
  });
}

}  // namespace kiln::cuda
