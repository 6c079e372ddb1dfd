// Uniform and normal fills of contiguous CUDA tensors. Thread b draws Philox block
// first_block + b and writes its values exactly where the CPU fill writes them, so a seed
// gives the same numbers on both devices (kernels/common/random_blocks.h).
#include <cuda_runtime.h>
#include <cmath>
#include "kernels/common/random_blocks.h"
#include "kernels/cuda/plan/launch.h"
#include "runtime/src/core/device_random.h"
#include "runtime/src/cuda/cuda_context.h"

namespace kiln::cuda::detail {
namespace {

template <typename S, typename Body>
__global__ void philox_fill_kernel(S* out, int64_t n, random_detail::BlockRange r, Body body) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < r.num_blocks; b += stride)
    random_detail::fill_block(out, n, r, b, body);
}

template <typename S, typename Body>
void launch_fill(const Tensor& t, S* out, int64_t n, const Body& body, Generator& gen, const char* op) {
  check_device(t.device().index, op);
  const random_detail::BlockRange r = random_detail::reserve_blocks(gen, n, Body::kPerBlock);
  if (r.num_blocks == 0) return;
  DeviceGuard guard(t.device().index);
  cuda_plan::LaunchShape s = cuda_plan::elementwise_launch_shape(r.num_blocks, 1, sm_count(t.device().index));
  philox_fill_kernel<<<unsigned(s.blocks), s.threads, 0, current_cuda_stream(t.device().index)>>>(
      out, n, r, body);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

// Complex tensors are filled as 2n reals, as on the CPU.
template <template <typename> class Block>
void fill(Tensor& t, double a, double b, double complex_b, Generator& gen, const char* op) {
  const int64_t n = t.numel();
  void* p = t.data_ptr();
  switch (t.dtype()) {
    case DType::Float16: return launch_fill(t, static_cast<Half*>(p), n, Block<Half>(a, b), gen, op);
    case DType::BFloat16: return launch_fill(t, static_cast<BFloat16*>(p), n, Block<BFloat16>(a, b), gen, op);
    case DType::Float32: return launch_fill(t, static_cast<float*>(p), n, Block<float>(a, b), gen, op);
    case DType::Float64: return launch_fill(t, static_cast<double*>(p), n, Block<double>(a, b), gen, op);
    case DType::Complex64: return launch_fill(t, static_cast<float*>(p), 2 * n, Block<float>(a, complex_b), gen, op);
    case DType::Complex128:
      return launch_fill(t, static_cast<double*>(p), 2 * n, Block<double>(a, complex_b), gen, op);
    default: KILN_FAIL(InternalError, op, "self", "dtype ", dtype_name(t.dtype()), " was not checked");
  }
}

}  // namespace

void uniform_fill(Tensor& t, double from, double to, Generator& gen) {
  fill<random_detail::UniformBlock>(t, from, to, to, gen, "uniform_");
}

void normal_fill(Tensor& t, double mean, double std, Generator& gen) {
  fill<random_detail::NormalBlock>(t, mean, std, std / std::sqrt(2.0), gen, "normal_");
}

}  // namespace kiln::cuda::detail
