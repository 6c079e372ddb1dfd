// Reductions on CUDA: sum, mean, prod, amax/amin, max/min (all and along a dim, with indices),
// argmax/argmin, all/any, logsumexp and var, in every dtype the CPU takes (complex: sum, prod,
// mean, all/any and var). Argument rules, result shapes and dtypes are the
// CPU's (kernels/cpu/reduce_dims.h, kernel_utils.h); the input is laid out as rows or columns
// (reduce_layout.cuh) and reduced by the kernels of reduce.cuh. logsumexp and var are two
// reductions: the row's max (or mean), then the sum of exp(x - max) (or (x - mean)^2).
#include <cuda_runtime.h>
#include <tuple>
#include "kernels/cpu/kernel_utils.h"
#include "kernels/cuda/reduce_layout.cuh"
#include "kiln/gen/cuda_kernels.h"
#include "runtime/src/cuda/cuda_context.h"
#include "kiln/kiln.h"  // Tensor methods (contiguous, permute, ...) are defined inline there

namespace kiln::cuda {
namespace {

using cpu::ReduceDims;
using namespace reduce_detail;

// ---- loads: element -> accumulator
template <typename Acc>
struct ArgLoad {
  template <typename T>
  __device__ ArgPair<Acc> operator()(T x, int64_t, int64_t i) const { return {Acc(x), i}; }
};
struct TruthLoad {  // nonzero, NaN included (the CPU's truthy)
  template <typename T>
  __device__ bool operator()(T x, int64_t, int64_t) const { return acc_t<T>(x) != acc_t<T>(0); }
};
template <typename Acc>
struct ShiftedExpLoad {
  const Acc* shift;  // per row
  template <typename T>
  __device__ Acc operator()(T x, int64_t row, int64_t) const { return ::exp(Acc(x) - shift[row]); }
};
template <typename Acc, typename Real>
struct SquaredDeviationLoad {  // |x - mean|^2, real for complex x
  const Acc* mean;  // per row
  template <typename T>
  __device__ Real operator()(T x, int64_t row, int64_t) const {
    const Acc d = Acc(x) - mean[row];
    if constexpr (is_complex_v<Acc>) return d.re * d.re + d.im * d.im;
    else return d * d;
  }
};

// ---- stores: accumulator -> output element g
template <typename Out, typename Acc>
struct DivideStore {  // mean (count = reduced numel) and var (count = max(0, N - correction))
  Out* out;
  Acc count;
  __device__ void operator()(int64_t g, Acc a) const {
    if constexpr (is_complex_v<Acc>)
      out[g] = Out(Acc(a.re / count.re, a.im / count.re));  // over a real count, as the CPU
    else
      out[g] = Out(a / count);
  }
};
template <typename T, typename Acc>
struct ArgStore {
  T* values;  // null for argmax/argmin
  int64_t* indices;
  __device__ void operator()(int64_t g, ArgPair<Acc> a) const {
    if (values) values[g] = T(a.value);
    indices[g] = a.index;
  }
};
template <typename Acc>
struct ShiftStore {  // logsumexp's shift: the max, or 0 when it is infinite (all -inf rows give -inf)
  Acc* shift;
  __device__ void operator()(int64_t g, Acc m) const { shift[g] = ::isinf(m) ? Acc(0) : m; }
};
template <typename Out, typename Acc>
struct LogShiftStore {
  Out* out;
  const Acc* shift;
  __device__ void operator()(int64_t g, Acc s) const { out[g] = Out(::log(s) + shift[g]); }
};

// One accumulator per row in device memory (the max or mean of the first of two passes).
template <typename Acc>
Tensor per_row_scratch(int64_t rows, Device device) {
  return empty({rows * int64_t(sizeof(Acc))}, TensorOptions(DType::UInt8, device));
}

// sum / prod (Op) or mean of `in` (already cast as dtype= asks) into out_dtype.
template <template <typename> class Op, bool kMean>
Tensor sum_like(const Tensor& in, const ReduceDims& rd, DType out_dtype, const char* op) {
  detail::check_device(in.device().index, op);
  Tensor out = empty(rd.out_sizes, TensorOptions(out_dtype, in.device()));
  if (out.numel() == 0) return out;
  const int dev = in.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(in, rd);
  if constexpr (kMean) {
    visit<kFloats | kComplex>(in.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using Acc = acc_t<T>;
      reduce_layout<Acc, T>(r, Op<Acc>{}, CastLoad<Acc>{},
                       DivideStore<T, Acc>{mut<T>(out), Acc(r.len)}, dev, op);
    });
  } else {
    visit<kAll>(in.dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using Acc = acc_t<T>;
      if constexpr (std::is_integral_v<T>) {
        if (out_dtype != in.dtype()) {  // integers accumulate into int64
          reduce_layout<Acc, T>(r, Op<Acc>{}, CastLoad<Acc>{}, CastStore<int64_t>{mut<int64_t>(out)},
                           dev, op);
          return;
        }
      }
      reduce_layout<Acc, T>(r, Op<Acc>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(out)}, dev, op);
    });
  }
  return out;
}

template <bool kMax>
Tensor minmax(const Tensor& self, IntArrayRef dim, bool keepdim, const char* op) {
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, op);
  cpu::check_nonempty_reduction(self, rd, dim.empty(), op);
  detail::check_device(self.device().index, op);
  Tensor out = empty(rd.out_sizes, TensorOptions(self.dtype(), self.device()));
  if (out.numel() == 0) return out;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, rd);
  visit<kReal>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, kMax>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(out)},
                     dev, op);
  });
  return out;
}

// Indices (and values) of the max/min along the reduced dims of rd.
template <bool kMax>
void arg_reduce(const Tensor& in, const ReduceDims& rd, Tensor* values, Tensor& indices, const char* op) {
  if (indices.numel() == 0) return;
  const int dev = in.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(in, rd);
  visit<kReal>(in.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    ArgStore<T, Acc> store{values ? mut<T>(*values) : nullptr, mut<int64_t>(indices)};
    reduce_layout<ArgPair<Acc>, T>(r, ArgOp<Acc, kMax>{}, ArgLoad<Acc>{}, store, dev, op);
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

// all / any: bool results, except uint8 inputs which give uint8 (as the CPU).
template <bool kAll>
Tensor logical(const Tensor& self, const ReduceDims& rd, const char* op) {
  detail::check_device(self.device().index, op);
  const bool as_uint8 = self.dtype() == DType::UInt8;
  Tensor out = empty(rd.out_sizes, TensorOptions(as_uint8 ? DType::UInt8 : DType::Bool, self.device()));
  if (out.numel() == 0) return out;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, rd);
  visit<kAll>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if (as_uint8)
      reduce_layout<bool, T>(r, LogicalOp<kAll>{}, TruthLoad{}, CastStore<uint8_t>{mut<uint8_t>(out)},
                        dev, op);
    else
      reduce_layout<bool, T>(r, LogicalOp<kAll>{}, TruthLoad{}, CastStore<bool>{mut<bool>(out)},
                        dev, op);
  });
  return out;
}

}  // namespace

Tensor sum(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, "sum");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like<SumOp, false>(in, rd, cpu::sum_result_dtype(self.dtype(), dtype), "sum");
}

Tensor mean(const Tensor& self, OptIntList dim, bool keepdim, std::optional<DType> dtype) {
  KILN_CHECK(!dtype || is_inexact(*dtype), DTypeError, "mean", "dtype",
             "mean(): could not infer output dtype. Optional dtype must be either a floating point or "
             "complex dtype. Got: ", dtype_name(*dtype));
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, "mean");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like<SumOp, true>(in, rd, in.dtype(), "mean");
}

Tensor prod(const Tensor& self, std::optional<DType> dtype) {
  ReduceDims rd = cpu::reduce_dims(self, IntArrayRef(), false, "prod");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like<ProdOp, false>(in, rd, cpu::sum_result_dtype(self.dtype(), dtype), "prod");
}

Tensor prod_dim(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  ReduceDims rd = cpu::reduce_one_dim(self, dim, keepdim, "prod");
  Tensor in = dtype ? cpu::cast_if_needed(self, *dtype) : self;
  return sum_like<ProdOp, false>(in, rd, cpu::sum_result_dtype(self.dtype(), dtype), "prod");
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

Tensor all_all(const Tensor& self) {
  return logical<true>(self, cpu::reduce_dims(self, IntArrayRef(), false, "all"), "all");
}
Tensor any_all(const Tensor& self) {
  return logical<false>(self, cpu::reduce_dims(self, IntArrayRef(), false, "any"), "any");
}
Tensor all_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return logical<true>(self, cpu::reduce_one_dim(self, dim, keepdim, "all"), "all");
}
Tensor any_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return logical<false>(self, cpu::reduce_one_dim(self, dim, keepdim, "any"), "any");
}

Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const char* op = "logsumexp";
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, op);
  detail::check_device(self.device().index, op);
  KILN_CHECK(is_floating(self.dtype()), DTypeError, op, "self", "expected a floating point tensor, got ",
             dtype_name(self.dtype()));
  Tensor out = empty(rd.out_sizes, TensorOptions(self.dtype(), self.device()));
  if (out.numel() == 0) return out;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, rd);
  visit<kFloats>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    Tensor shift = per_row_scratch<Acc>(r.rows, self.device());
    Acc* s = mut<Acc>(shift);
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, true>{}, CastLoad<Acc>{}, ShiftStore<Acc>{s}, dev,
                     op);
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, ShiftedExpLoad<Acc>{s},
                     LogShiftStore<T, Acc>{mut<T>(out), s}, dev, op);
  });
  return out;
}

Tensor var(const Tensor& self, OptIntList dim, const std::optional<Scalar>& correction, bool keepdim) {
  const char* op = "var";
  ReduceDims rd = cpu::reduce_dims(self, dim, keepdim, op);
  detail::check_device(self.device().index, op);
  KILN_CHECK(is_floating(self.dtype()) || is_complex(self.dtype()), DTypeError, op, "self",
             "var on CUDA supports floating point and complex tensors; got ", dtype_name(self.dtype()));
  const double c = correction ? correction->to_double() : 1.0;
  Tensor out = empty(rd.out_sizes, TensorOptions(to_real(self.dtype()), self.device()));
  if (out.numel() == 0) return out;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, rd);
  visit<kFloats | kComplex>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    using Real = real_acc_t<T>;
    using Out = std::conditional_t<is_complex_v<T>, Real, T>;
    Tensor mean = per_row_scratch<Acc>(r.rows, self.device());
    Acc* m = mut<Acc>(mean);
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, CastLoad<Acc>{}, DivideStore<Acc, Acc>{m, Acc(r.len)},
                     dev, op);
    const Real divisor = Real(std::max(0.0, double(r.len) - c));  // 0: NaN (or inf), as the CPU
    reduce_layout<Real, T>(r, SumOp<Real>{}, SquaredDeviationLoad<Acc, Real>{m},
                     DivideStore<Out, Real>{mut<Out>(out), divisor}, dev, op);
  });
  return out;
}

}  // namespace kiln::cuda
