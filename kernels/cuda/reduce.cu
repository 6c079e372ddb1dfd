// Reductions on CUDA: sum, mean, amax/amin, max/min (all and along a dim, with indices) and
// argmax/argmin. Argument rules, result shapes and dtypes are the CPU's (kernels/cpu/reduce_dims.h,
// kernel_utils.h); the input is laid out as rows (kept dims first, reduced dims last, one device
// copy unless already so) and reduced row by row (reduce.cuh).
#include <cuda_runtime.h>
#include <tuple>
#include "kernels/cpu/kernel_utils.h"
#include "kernels/cpu/reduce_dims.h"
#include "kernels/cuda/reduce.cuh"
#include "kiln/gen/cuda_kernels.h"
#include "runtime/src/cuda/cuda_context.h"
#include "kiln/kiln.h"  // Tensor methods (contiguous, permute, ...) are defined inline there

namespace kiln::cuda {
namespace {

using cpu::ReduceDims;
using namespace reduce_detail;

// `in` as a dense [rows, len] tensor with the reduced dims last.
struct Rows {
  Tensor data;
  int64_t rows, len;
};
Rows as_rows(const Tensor& in, const ReduceDims& rd) {
  DimVector kept, reduced;
  int64_t rows = 1;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (rd.reduced[size_t(d)]) {
      reduced.push_back(d);
    } else {
      kept.push_back(d);
      rows *= in.size(d);
    }
  }
  DimVector perm = kept;
  for (int64_t d : reduced) perm.push_back(d);
  Tensor p = in.dim() > 0 ? in.permute(perm) : in;
  return {p.contiguous(), rows, rd.reduced_numel};
}

template <typename T, typename Acc, typename Out, typename Op, typename Finish>
__global__ void reduce_rows_kernel(const T* in, Out* out, int64_t rows, int64_t len, Op op, Finish finish) {
  extern __shared__ unsigned char scratch_bytes[];
  Acc* scratch = reinterpret_cast<Acc*>(scratch_bytes);
  for (int64_t g = blockIdx.x; g * blockDim.y < rows; g += gridDim.x) {
    const int64_t row = g * blockDim.y + threadIdx.y;
    Acc acc = op.init();
    if (row < rows)
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) acc = op.combine(acc, Acc(in[row * len + i]));
    acc = group_reduce(acc, op, scratch);
    if (row < rows && threadIdx.x == 0) out[row] = finish(acc);
  }
}

template <typename T, typename Acc, typename Op>
__global__ void arg_rows_kernel(const T* in, T* values, int64_t* indices, int64_t rows, int64_t len, Op op) {
  extern __shared__ unsigned char scratch_bytes[];
  auto* scratch = reinterpret_cast<ArgPair<Acc>*>(scratch_bytes);
  for (int64_t g = blockIdx.x; g * blockDim.y < rows; g += gridDim.x) {
    const int64_t row = g * blockDim.y + threadIdx.y;
    ArgPair<Acc> acc = op.init();
    if (row < rows)
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) acc = op.combine(acc, {Acc(in[row * len + i]), i});
    acc = group_reduce(acc, op, scratch);
    if (row < rows && threadIdx.x == 0) {
      if (values) values[row] = T(acc.value);
      indices[row] = acc.index;
    }
  }
}

template <typename Out, typename Acc>
struct Cast {
  __device__ Out operator()(Acc a) const { return Out(a); }
};
template <typename Out, typename Acc>
struct DivideBy {
  Acc count;
  __device__ Out operator()(Acc a) const { return Out(a / count); }
};

struct Launch {
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
};
Launch launch_for(const Tensor& t, int64_t rows, int64_t len, size_t acc_bytes, bool with_index) {
  const cuda_plan::ReduceShape s = cuda_plan::reduce_shape(rows, len);
  return {dim3(unsigned(std::max<int64_t>(s.blocks, 1))), dim3(unsigned(s.threads_per_row), unsigned(s.rows_per_block)),
          cuda_plan::reduce_shared_bytes(s, acc_bytes, with_index), detail::current_cuda_stream(t.device().index)};
}

template <typename T, typename Out, typename Op, typename Finish>
void run_rows(const Rows& r, Tensor& out, const Op& op, const Finish& finish, const char* op_name) {
  using Acc = acc_t<T>;
  Launch l = launch_for(r.data, r.rows, r.len, sizeof(Acc), false);
  reduce_rows_kernel<T, Acc, Out><<<l.grid, l.block, l.shared, l.stream>>>(
      static_cast<const T*>(r.data.data_ptr()), static_cast<Out*>(out.data_ptr()), r.rows, r.len, op, finish);
  KILN_CUDA_CHECK(cudaGetLastError(), op_name, "kernel launch");
}

// Sum or mean of `in` (already cast as dtype= asks) into out_dtype.
Tensor sum_like(const Tensor& in, const ReduceDims& rd, DType out_dtype, bool mean, const char* op) {
  detail::check_device(in.device().index, op);
  Tensor out = empty(rd.out_sizes, TensorOptions(out_dtype, in.device()));
  if (out.numel() == 0) return out;
  DeviceGuard guard(in.device().index);
  Rows r = as_rows(in, rd);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    if (mean) run_rows<T, T>(r, out, SumOp<Acc>{}, DivideBy<T, Acc>{Acc(r.len)}, op);
    else if (out_dtype == in.dtype()) run_rows<T, T>(r, out, SumOp<Acc>{}, Cast<T, Acc>{}, op);
    else run_rows<T, int64_t>(r, out, SumOp<Acc>{}, Cast<int64_t, Acc>{}, op);  // integers sum to int64
  };
  switch (in.dtype()) {
    case DType::Float16: run(Half{}); break;
    case DType::BFloat16: run(BFloat16{}); break;
    case DType::Float32: run(float{}); break;
    case DType::Float64: run(double{}); break;
    case DType::Int32: if (!mean) { run(int32_t{}); break; } [[fallthrough]];
    case DType::Int64: if (!mean) { run(int64_t{}); break; } [[fallthrough]];
    default:
      KILN_FAIL(DTypeError, op, "self", op, " on CUDA supports float16, bfloat16, float32, float64",
                mean ? "" : ", int32 and int64", "; got ", dtype_name(in.dtype()));
  }
  return out;
}

// Calls f(T{}) for the dtypes the CUDA min/max/arg kernels are built for.
template <typename F>
void visit_ordered(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    default: break;
  }
  KILN_FAIL(DTypeError, op, "self", op, " on CUDA supports float16, bfloat16, float32, float64, int32 and int64; got ",
            dtype_name(d));
}

template <bool kMax>
Tensor minmax(const Tensor& self, IntArrayRef dim, bool keepdim, const char* op) {
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, op);
  cpu::check_nonempty_reduction(self, rd, dim.empty(), op);
  detail::check_device(self.device().index, op);
  Tensor out = empty(rd.out_sizes, TensorOptions(self.dtype(), self.device()));
  if (out.numel() == 0) return out;
  DeviceGuard guard(self.device().index);
  Rows r = as_rows(self, rd);
  visit_ordered(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    run_rows<T, T>(r, out, MinMaxOp<Acc, kMax>{}, Cast<T, Acc>{}, op);
  });
  return out;
}

// Indices (and values) of the max/min along the reduced dims of rd.
template <bool kMax>
void arg_reduce(const Tensor& in, const ReduceDims& rd, Tensor* values, Tensor& indices, const char* op) {
  if (indices.numel() == 0) return;
  DeviceGuard guard(in.device().index);
  Rows r = as_rows(in, rd);
  visit_ordered(in.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    Launch l = launch_for(r.data, r.rows, r.len, sizeof(ArgPair<Acc>), false);
    arg_rows_kernel<T, Acc><<<l.grid, l.block, l.shared, l.stream>>>(
        static_cast<const T*>(r.data.data_ptr()), values ? static_cast<T*>(values->data_ptr()) : nullptr,
        static_cast<int64_t*>(indices.data_ptr()), r.rows, r.len, ArgOp<Acc, kMax>{});
    KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  });
}

template <bool kMax>
std::tuple<Tensor, Tensor> minmax_dim(const Tensor& self, int64_t dim, bool keepdim, const char* op) {
  ReduceDims rd = cpu::reduce_one_dim(self, dim, keepdim, op);
  cpu::check_nonempty_reduction(self, rd, false, op);
  detail::check_device(self.device().index, op);
  Tensor values = empty(rd.out_sizes, TensorOptions(self.dtype(), self.device()));
  Tensor indices = empty(rd.out_sizes, TensorOptions(DType::Int64, self.device()));
  arg_reduce<kMax>(self, rd, &values, indices, op);
  return {values, indices};
}

template <bool kMax>
Tensor arg(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const char* op) {
  detail::check_device(self.device().index, op);
  if (dim) {
    ReduceDims rd = cpu::reduce_one_dim(self, *dim, keepdim, op);
    cpu::check_nonempty_reduction(self, rd, false, op);
    Tensor indices = empty(rd.out_sizes, TensorOptions(DType::Int64, self.device()));
    arg_reduce<kMax>(self, rd, nullptr, indices, op);
    return indices;
  }
  // dim=None: index into the flattened tensor (keepdim keeps every dim as size 1).
  KILN_CHECK(self.numel() != 0, IndexError, op, "self", op,
             "(): Expected reduction dim to be specified for input.numel() == 0.");
  ReduceDims rd = cpu::reduce_dims(self, IntArrayRef(), keepdim, op);
  Tensor indices = empty(rd.out_sizes, TensorOptions(DType::Int64, self.device()));
  arg_reduce<kMax>(self.contiguous(), rd, nullptr, indices, op);
  return indices;
}

}  // namespace

Tensor sum(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, "sum");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like(in, rd, cpu::sum_result_dtype(self.dtype(), dtype), false, "sum");
}

Tensor mean(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  KILN_CHECK(!dtype || is_inexact(*dtype), DTypeError, "mean", "dtype",
             "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
             "complex dtype. Got: ", dtype_name(*dtype));
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, "mean");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like(in, rd, in.dtype(), true, "mean");
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) { return minmax<true>(self, dim, keepdim, "amax"); }
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) { return minmax<false>(self, dim, keepdim, "amin"); }
Tensor max_all(const Tensor& self) { return minmax<true>(self, {}, false, "max"); }
Tensor min_all(const Tensor& self) { return minmax<false>(self, {}, false, "min"); }

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim<true>(self, dim, keepdim, "max");
}
std::tuple<Tensor, Tensor> min_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return minmax_dim<false>(self, dim, keepdim, "min");
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg<true>(self, dim, keepdim, "argmax");
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg<false>(self, dim, keepdim, "argmin");
}

}  // namespace kiln::cuda
