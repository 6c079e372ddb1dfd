// Uniform, normal, randint and bernoulli fills of contiguous CUDA tensors. Thread b draws Philox block
// first_block + b and writes its values exactly where the CPU fill writes them, so a seed
// gives the same numbers on both devices (kiln/common/random_blocks.h).
#include <cuda_runtime.h>
#include <cmath>
#include "kiln/common/random_blocks.h"
#include "plan/launch.h"
#include "device_random.h"
#include "kiln/cuda/context.h"

namespace kiln::cuda::detail {
namespace {

template <typename S, typename Body>
__global__ void philox_fill_kernel(S* out, int64_t n, random_detail::BlockRange r, Body body) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < r.num_blocks; b += stride)
    random_detail::fill_block(out, n, r, b, body);
}

template <typename S, typename Body>
void launch_fill(const TensorBase& t, S* out, int64_t n, const Body& body, Generator& gen, const char* op) {
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
void fill(TensorBase& t, double a, double b, double complex_b, Generator& gen, const char* op) {
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

template <typename S>
void randint_typed(TensorBase& t, int64_t low, uint64_t range, Generator& gen) {
  S* out = static_cast<S*>(t.data_ptr());
  if (range <= (uint64_t(1) << 32))
    launch_fill(t, out, t.numel(), random_detail::RandintBlock<S, false>{low, range}, gen, "randint");
  else
    launch_fill(t, out, t.numel(), random_detail::RandintBlock<S, true>{low, range}, gen, "randint");
}

template <typename S>
void bernoulli_typed(TensorBase& t, const TensorBase& p, Generator& gen) {
  random_detail::BernoulliBlock<S> body{static_cast<const S*>(p.data_ptr())};
  launch_fill(t, static_cast<S*>(t.data_ptr()), t.numel(), body, gen, "bernoulli");
}

}  // namespace

void randint_fill(TensorBase& t, int64_t low, uint64_t range, Generator& gen) {
  switch (t.dtype()) {
    case DType::Bool: return randint_typed<bool>(t, low, range, gen);
    case DType::UInt8: return randint_typed<uint8_t>(t, low, range, gen);
    case DType::Int8: return randint_typed<int8_t>(t, low, range, gen);
    case DType::Int16: return randint_typed<int16_t>(t, low, range, gen);
    case DType::Int32: return randint_typed<int32_t>(t, low, range, gen);
    case DType::Int64: return randint_typed<int64_t>(t, low, range, gen);
    case DType::Float16: return randint_typed<Half>(t, low, range, gen);
    case DType::BFloat16: return randint_typed<BFloat16>(t, low, range, gen);
    case DType::Float32: return randint_typed<float>(t, low, range, gen);
    case DType::Float64: return randint_typed<double>(t, low, range, gen);
    default: KILN_FAIL(InternalError, "randint", "dtype", "dtype ", dtype_name(t.dtype()), " was not checked");
  }
}

void bernoulli_fill(TensorBase& t, const TensorBase& p, Generator& gen) {
  switch (t.dtype()) {
    case DType::Float16: return bernoulli_typed<Half>(t, p, gen);
    case DType::BFloat16: return bernoulli_typed<BFloat16>(t, p, gen);
    case DType::Float32: return bernoulli_typed<float>(t, p, gen);
    case DType::Float64: return bernoulli_typed<double>(t, p, gen);
    default: KILN_FAIL(InternalError, "bernoulli", "p", "dtype ", dtype_name(t.dtype()), " was not checked");
  }
}

void uniform_fill(TensorBase& t, double from, double to, Generator& gen) {
  fill<random_detail::UniformBlock>(t, from, to, to, gen, "uniform_");
}

void normal_fill(TensorBase& t, double mean, double std, Generator& gen) {
  fill<random_detail::NormalBlock>(t, mean, std, std / std::sqrt(2.0), gen, "normal_");
}

}  // namespace kiln::cuda::detail
