// softmax and log_softmax on CUDA: max-subtracted, exp(x - max) / sum or x - max - log(sum), in
// float32 for 16-bit inputs. The meta step (kiln/meta/along_dim.h) has cast the input to the
// result dtype and split it as [outer, size, inner] around dim: inner == 1 gives a row
// group per row (plan/reduce_plan.h), which reads the row twice (the running max and sum in
// one pass, then the outputs); inner > 1 gives a thread per column striding by inner
// when there are enough columns, else the dim is moved last (one device copy each way).
#include <cuda_runtime.h>
#include <limits>
#include "reduce.cuh"
#include "kiln/gen/kernels/cuda/log_softmax.h"
#include "kiln/gen/kernels/cuda/softmax.h"
#include "kiln/cuda/context.h"
#include "kiln/strided_views.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using namespace reduce_detail;

// The running (max, sum of exp(x - max)) of a part of a row, so one pass finds both (PyTorch's
// two-pass answer, including its NaNs): a finite x is {x, 1}; -inf adds nothing (all -inf gives
// {-inf, 0}, and then NaN outputs, as exp(-inf - -inf) does); +inf and NaN make the sum NaN.
template <typename Acc>
struct MaxSum {
  Acc m, s;
};

template <typename Acc>
struct MaxSumOp {
  KILN_HOST_DEVICE MaxSum<Acc> init() const { return {-std::numeric_limits<Acc>::infinity(), Acc(0)}; }
  KILN_HOST_DEVICE static bool empty(const MaxSum<Acc>& a) { return a.s == Acc(0) && a.m < Acc(0) && ::isinf(a.m); }
  KILN_HOST_DEVICE MaxSum<Acc> combine(MaxSum<Acc> a, MaxSum<Acc> b) const {
    if (empty(b)) return a;
    if (empty(a)) return b;
    const Acc m = cuda_plan::is_nan(a.m) || cuda_plan::is_nan(b.m) ? a.m + b.m : (a.m < b.m ? b.m : a.m);
    return {m, a.s * ::exp(a.m - m) + b.s * ::exp(b.m - m)};
  }
  // a with one more element x: the common finite case without the general rescale.
  KILN_HOST_DEVICE MaxSum<Acc> step(MaxSum<Acc> a, Acc x) const {
    if (!::isfinite(x)) return combine(a, {x, x < Acc(0) && ::isinf(x) ? Acc(0) : x - x});  // -inf: 0; +inf, NaN: NaN
    if (x > a.m) return {x, a.s * ::exp(a.m - x) + Acc(1)};
    return {a.m, a.s + ::exp(x - a.m)};  // a.m NaN or +inf keeps the sum NaN
  }
};

template <typename Acc>
__device__ __forceinline__ MaxSum<Acc> shuffle_down(MaxSum<Acc> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.m, offset), __shfl_down_sync(0xffffffffu, v.s, offset)};
}

template <typename T, bool kLog>
__global__ void softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t len) {
  using Acc = acc_t<T>;
  extern __shared__ unsigned char scratch_bytes[];
  MaxSum<Acc>* scratch = reinterpret_cast<MaxSum<Acc>*>(scratch_bytes);
  // One slot per row group for broadcasting the row's max and sum to all its threads.
  MaxSum<Acc>* shared_row = scratch + blockDim.y * (blockDim.x / cuda_plan::kWarp);
  const MaxSumOp<Acc> op;
  for (int64_t g = blockIdx.x; g * blockDim.y < rows; g += gridDim.x) {
    const int64_t row = g * blockDim.y + threadIdx.y;
    const bool valid = row < rows;
    const T* x = in + (valid ? row : 0) * len;
    T* y = out + (valid ? row : 0) * len;
    MaxSum<Acc> a0 = op.init();
    if (valid) {
      // two running pairs keep two loads in flight
      MaxSum<Acc> a1 = op.init();
      const int64_t step = blockDim.x;
      int64_t i = threadIdx.x;
      for (; i + step < len; i += 2 * step) {
        const Acc x0 = Acc(x[i]), x1 = Acc(x[i + step]);
        a0 = op.step(a0, x0);
        a1 = op.step(a1, x1);
      }
      if (i < len) a0 = op.step(a0, Acc(x[i]));
      a0 = op.combine(a0, a1);
    }
    a0 = group_reduce(a0, op, scratch);
    if (threadIdx.x == 0) shared_row[threadIdx.y] = a0;
    __syncthreads();
    const MaxSum<Acc> r = shared_row[threadIdx.y];
    if (valid) {
      if (kLog) {
        const Acc shift = r.m + ::log(r.s);
        for (int64_t i = threadIdx.x; i < len; i += blockDim.x) y[i] = T(Acc(x[i]) - shift);
      } else {
        const Acc inv = Acc(1) / r.s;
        for (int64_t i = threadIdx.x; i < len; i += blockDim.x) y[i] = T(::exp(Acc(x[i]) - r.m) * inv);
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

// inner > 1 with enough columns: a thread per column of the contiguous input, striding by inner.
template <bool kLog>
void softmax_columns(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& in, const char* op) {
  const meta::DimSplit sp = plan.split;
  const int64_t columns = sp.outer * sp.inner;
  const int threads = cuda_plan::kReduceBlockThreads;
  const int64_t blocks = std::min((columns + threads - 1) / threads, cuda_plan::kMaxGridBlocks);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      softmax_columns_kernel<T, kLog><<<unsigned(blocks), threads, 0, detail::current_cuda_stream(in.device().index)>>>(
          static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), columns, sp.size, sp.inner);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

// Rows of `len` elements in `in`, results into the contiguous `out` of the same shape.
template <bool kLog>
void softmax_rows(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& in, int64_t len,
                  const char* op) {
  const int64_t rows = in.numel() / len;
  const cuda_plan::ReduceShape s = cuda_plan::reduce_shape(rows, len);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_floating(dtype_of<T>)) {
      using Acc = acc_t<T>;
      const size_t shared = cuda_plan::reduce_shared_bytes(s, sizeof(MaxSum<Acc>), false) +
                            size_t(s.rows_per_block) * sizeof(MaxSum<Acc>);
      softmax_rows_kernel<T, kLog><<<unsigned(std::max<int64_t>(s.blocks, 1)),
                                     dim3(unsigned(s.threads_per_row), unsigned(s.rows_per_block)), shared,
                                     detail::current_cuda_stream(in.device().index)>>>(
          static_cast<const T*>(in.data_ptr()), static_cast<T*>(out.data_ptr()), rows, len);
      KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
    }
  });
}

template <bool kLog>
void softmax_impl(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  detail::check_device(self.device().index, op);
  if (self.numel() == 0) return;
  DeviceGuard guard(self.device().index);
  const int64_t nd = self.dim(), d = plan.dim;
  if (cuda_plan::softmax_strided(plan.split.outer, plan.split.inner)) return softmax_columns<kLog>(plan, out, self, op);
  if (nd == 0 || d == nd - 1) return softmax_rows<kLog>(plan, out, self, plan.split.size, op);
  // Few columns: move the dim last (one device copy each way) and take the row path.
  TensorBase moved = views::transposed(self, d, nd - 1).contiguous();
  TensorBase result = kiln::detail::empty_dense(moved.sizes(), TensorOptions(plan.dtype, self.device()));
  softmax_rows<kLog>(plan, result, moved, plan.split.size, op);
  out.copy_(views::transposed(result, d, nd - 1));
}

}  // namespace

void softmax(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  softmax_impl<false>(plan, out, self, "softmax");
}

void log_softmax(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self) {
  softmax_impl<true>(plan, out, self, "log_softmax");
}

}  // namespace kiln::cuda
