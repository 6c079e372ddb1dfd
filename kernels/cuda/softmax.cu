// softmax and log_softmax on CUDA: max-subtracted, exp(x - max) / sum or x - max - log(sum), in
// float32 for 16-bit inputs. Viewed as [outer, size, inner] around dim: inner == 1 gives a row
// group per row (plan/reduce_plan.h); inner > 1 gives a thread per column striding by inner
// when there are enough columns, else the dim is moved last (one device copy each way).
#include <cuda_runtime.h>
#include "kernels/cpu/kernel_utils.h"
#include "kernels/cuda/reduce.cuh"
#include "kiln/gen/cuda_kernels.h"
#include "runtime/src/cuda/cuda_context.h"
#include "kiln/kiln.h"  // Tensor methods (contiguous, permute, ...) are defined inline there

namespace kiln::cuda {
namespace {

using namespace reduce_detail;

template <typename T, bool kLog>
__global__ void softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t len) {
  using Acc = acc_t<T>;
  extern __shared__ unsigned char scratch_bytes[];
  Acc* scratch = reinterpret_cast<Acc*>(scratch_bytes);
  // One slot per row group for broadcasting the row's max and sum to all its threads.
  Acc* shared_row = scratch + blockDim.y * (blockDim.x / cuda_plan::kWarp);
  const MinMaxOp<Acc, true> max_op;
  const SumOp<Acc> sum_op;
  for (int64_t g = blockIdx.x; g * blockDim.y < rows; g += gridDim.x) {
    const int64_t row = g * blockDim.y + threadIdx.y;
    const bool valid = row < rows;
    const T* x = in + (valid ? row : 0) * len;
    T* y = out + (valid ? row : 0) * len;
    Acc m = max_op.init();
    if (valid)
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) m = max_op.combine(m, Acc(x[i]));
    m = group_reduce(m, max_op, scratch);
    if (threadIdx.x == 0) shared_row[threadIdx.y] = m;
    __syncthreads();
    m = shared_row[threadIdx.y];
    Acc s = sum_op.init();
    if (valid)
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) s += ::exp(Acc(x[i]) - m);
    s = group_reduce(s, sum_op, scratch);
    __syncthreads();
    if (threadIdx.x == 0) shared_row[threadIdx.y] = s;
    __syncthreads();
    s = shared_row[threadIdx.y];
    if (valid) {
      if (kLog) {
        const Acc shift = m + ::log(s);
        for (int64_t i = threadIdx.x; i < len; i += blockDim.x) y[i] = T(Acc(x[i]) - shift);
      } else {
        const Acc inv = Acc(1) / s;
        for (int64_t i = threadIdx.x; i < len; i += blockDim.x) y[i] = T(::exp(Acc(x[i]) - m) * inv);
      }
    }
    __syncthreads();
  }
}

// One thread per column (c < outer * inner) of the dense [outer, size, inner] input: three
// passes down the column (max, sum of exp, write); threads of a warp read adjacent elements.
template <typename T, bool kLog>
__global__ void softmax_columns_kernel(const T* in, T* out, int64_t columns, int64_t size, int64_t inner) {
  using Acc = acc_t<T>;
  const MinMaxOp<Acc, true> max_op;
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < columns; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = cuda_plan::column_base(c, size, inner);
    const T* x = in + base;
    T* y = out + base;
    Acc m = max_op.init();
    for (int64_t j = 0; j < size; ++j) m = max_op.combine(m, Acc(x[j * inner]));
    Acc s = 0;
    for (int64_t j = 0; j < size; ++j) s += ::exp(Acc(x[j * inner]) - m);
    if (kLog) {
      const Acc shift = m + ::log(s);
      for (int64_t j = 0; j < size; ++j) y[j * inner] = T(Acc(x[j * inner]) - shift);
    } else {
      const Acc inv = Acc(1) / s;
      for (int64_t j = 0; j < size; ++j) y[j * inner] = T(::exp(Acc(x[j * inner]) - m) * inv);
    }
  }
}

template <bool kLog>
Tensor softmax_columns(const Tensor& self, int64_t d, DType dt, const char* op) {
  const cpu::DimSplit sp = cpu::split_at_dim(self, d);
  Tensor in = cpu::dense(self, dt);
  Tensor out = empty(in.sizes(), TensorOptions(dt, self.device()));
  const int64_t columns = sp.outer * sp.inner;
  const int threads = cuda_plan::kReduceBlockThreads;
  const int64_t blocks = std::min((columns + threads - 1) / threads, cuda_plan::kMaxGridBlocks);
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      softmax_columns_kernel<T, kLog><<<unsigned(blocks), threads, 0, detail::current_cuda_stream(self.device().index)>>>(
          static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), columns, sp.size, sp.inner);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
  return out;
}

template <bool kLog>
Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<DType> dtype, const char* op) {
  const int64_t nd = self.dim();
  const int64_t d = wrap_dim(dim, nd == 0 ? 1 : nd, op, "dim");
  const DType dt = dtype.value_or(self.dtype());
  KILN_CHECK(is_floating(dt), DTypeError, op, "dtype", "expected a floating point dtype, got ", dtype_name(dt));
  detail::check_device(self.device().index, op);
  if (self.numel() == 0) return empty(self.sizes(), TensorOptions(dt, self.device()));
  DeviceGuard guard(self.device().index);
  const cpu::DimSplit split = cpu::split_at_dim(self, d);
  if (cuda_plan::softmax_strided(split.outer, split.inner)) return softmax_columns<kLog>(self, d, dt, op);
  const bool last = nd == 0 || d == nd - 1;
  Tensor moved = last ? self : self.transpose(d, nd - 1);
  Tensor in = cpu::dense(moved, dt);
  Tensor out = empty(in.sizes(), TensorOptions(dt, self.device()));
  const int64_t len = nd == 0 ? 1 : in.size(nd - 1), rows = in.numel() / len;
  const cuda_plan::ReduceShape s = cuda_plan::reduce_shape(rows, len);
  visit_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using Acc = acc_t<T>;
      const size_t shared = cuda_plan::reduce_shared_bytes(s, sizeof(Acc), false) + size_t(s.rows_per_block) * sizeof(Acc);
      softmax_rows_kernel<T, kLog><<<unsigned(std::max<int64_t>(s.blocks, 1)),
                                     dim3(unsigned(s.threads_per_row), unsigned(s.rows_per_block)), shared,
                                     detail::current_cuda_stream(self.device().index)>>>(
          static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), rows, len);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
  return last ? out : out.transpose(d, nd - 1).contiguous();
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl<false>(self, dim, dtype, "softmax");
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl<true>(self, dim, dtype, "log_softmax");
}

}  // namespace kiln::cuda
