// Reductions on CUDA: sum, mean, prod, amax/amin, max/min (all and along a dim, with indices),
// argmax/argmin, all/any, logsumexp and var, in every dtype the CPU takes (complex: sum, prod,
// mean, all/any and var). Argument rules, result shapes and dtypes come from the meta step
// (kiln/meta/reduction.h), shared with the CPU; the input is laid out as rows or columns
// (reduce_layout.cuh) and reduced by the kernels of reduce.cuh. logsumexp is two reductions
// (the row's max, then the sum of exp(x - max)); var is one Welford pass in double precision,
// merged as the CPU's (kiln/common/welford.h).
#include <cuda_runtime.h>
#include <tuple>
#include "reduce_layout.cuh"
#include "kiln/gen/kernels/cuda/all_all.h"
#include "kiln/gen/kernels/cuda/all_dim.h"
#include "kiln/gen/kernels/cuda/amax.h"
#include "kiln/gen/kernels/cuda/amin.h"
#include "kiln/gen/kernels/cuda/any_all.h"
#include "kiln/gen/kernels/cuda/any_dim.h"
#include "kiln/gen/kernels/cuda/argmax.h"
#include "kiln/gen/kernels/cuda/argmin.h"
#include "kiln/gen/kernels/cuda/logsumexp.h"
#include "kiln/gen/kernels/cuda/max_all.h"
#include "kiln/gen/kernels/cuda/max_dim.h"
#include "kiln/gen/kernels/cuda/mean.h"
#include "kiln/gen/kernels/cuda/min_all.h"
#include "kiln/gen/kernels/cuda/min_dim.h"
#include "kiln/gen/kernels/cuda/prod.h"
#include "kiln/gen/kernels/cuda/prod_dim.h"
#include "kiln/gen/kernels/cuda/sum.h"
#include "kiln/gen/kernels/cuda/var.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

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
// var: a Welford state per element in double precision, merged as the CPU's (welford.h).
struct WelfordLoad {
  template <typename T>
  __device__ auto operator()(T x, int64_t, int64_t) const {
    if constexpr (is_complex_v<T>) return welford::of(complex<double>(double(x.re), double(x.im)));
    else return welford::of(double(acc_t<T>(x)));
  }
};
template <typename M>
struct WelfordOp {
  __device__ welford::State<M> init() const { return {}; }
  __device__ welford::State<M> combine(const welford::State<M>& a, const welford::State<M>& b) const {
    return welford::combine(a, b);
  }
};
template <typename Out>
struct VarianceStore {  // m2 / max(0, N - correction): 0 gives NaN (or inf), as the CPU
  Out* out;
  double correction;
  template <typename M>
  __device__ void operator()(int64_t g, const welford::State<M>& a) const {
    out[g] = Out(a.m2 / ::fmax(0.0, a.n - correction));
  }
};

// ---- stores: accumulator -> output element g
template <typename Out, typename Acc>
struct DivideStore {  // mean (count = reduced numel)
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
TensorBase per_row_scratch(int64_t rows, Device device) {
  return kiln::detail::empty_dense({rows * int64_t(sizeof(Acc))}, TensorOptions(DType::UInt8, device));
}

// sum / prod (Op) or mean of `in` (already cast as dtype= asks) into out.
template <template <typename> class Op, bool kMean>
void sum_like(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& in, const char* op) {
  detail::check_device(in.device().index, op);
  if (out.numel() == 0) return;
  const int dev = in.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(in, plan);
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
        if (plan.dtype != in.dtype()) {  // integers accumulate into int64
          reduce_layout<Acc, T>(r, Op<Acc>{}, CastLoad<Acc>{}, CastStore<int64_t>{mut<int64_t>(out)},
                           dev, op);
          return;
        }
      }
      reduce_layout<Acc, T>(r, Op<Acc>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(out)}, dev, op);
    });
  }
}

template <bool kMax>
void minmax(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  detail::check_device(self.device().index, op);
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kReal>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, kMax>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(out)},
                     dev, op);
  });
}

// Indices (and values) of the max/min along the reduced dims of plan. Reducing every dim
// (argmax with dim=None) indexes the flattened tensor, so the input is read row-major.
template <bool kMax>
void arg_reduce(const meta::ReducePlan& plan, const TensorBase& self, const TensorBase* values,
                const TensorBase& indices, const char* op) {
  detail::check_device(self.device().index, op);
  if (indices.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(plan.all_dims ? self.contiguous() : self, plan);
  visit<kReal>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    ArgStore<T, Acc> store{values ? mut<T>(*values) : nullptr, mut<int64_t>(indices)};
    reduce_layout<ArgPair<Acc>, T>(r, ArgOp<Acc, kMax>{}, ArgLoad<Acc>{}, store, dev, op);
  });
}

// all / any: bool results, except uint8 inputs which give uint8 (the meta step's Logical rule).
template <bool kIsAll>  // not kAll: that names the dtype set visited below
void logical(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  detail::check_device(self.device().index, op);
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kAll>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if (plan.dtype == DType::UInt8) {
      reduce_layout<bool, T>(r, LogicalOp<kIsAll>{}, TruthLoad{}, CastStore<uint8_t>{mut<uint8_t>(out)}, dev, op);
    } else {
      reduce_layout<bool, T>(r, LogicalOp<kIsAll>{}, TruthLoad{}, CastStore<bool>{mut<bool>(out)}, dev, op);
    }
  });
}

}  // namespace

void sum(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  sum_like<SumOp, false>(plan, out, self, "sum");
}
void mean(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  sum_like<SumOp, true>(plan, out, self, "mean");
}
void prod(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  sum_like<ProdOp, false>(plan, out, self, "prod");
}
void prod_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  sum_like<ProdOp, false>(plan, out, self, "prod");
}

void amax(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  minmax<true>(plan, out, self, "amax");
}
void amin(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  minmax<false>(plan, out, self, "amin");
}
void max_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  minmax<true>(plan, out, self, "max");
}
void min_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  minmax<false>(plan, out, self, "min");
}

void max_dim(const meta::ReducePlan& plan, const TensorBase& values, const TensorBase& indices,
             const TensorBase& self) {
  arg_reduce<true>(plan, self, &values, indices, "max");
}
void min_dim(const meta::ReducePlan& plan, const TensorBase& values, const TensorBase& indices,
             const TensorBase& self) {
  arg_reduce<false>(plan, self, &values, indices, "min");
}
void argmax(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  arg_reduce<true>(plan, self, nullptr, out, "argmax");
}
void argmin(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  arg_reduce<false>(plan, self, nullptr, out, "argmin");
}

void all_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<true>(plan, out, self, "all");
}
void any_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<false>(plan, out, self, "any");
}
void all_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<true>(plan, out, self, "all");
}
void any_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<false>(plan, out, self, "any");
}

void logsumexp(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  const char* op = "logsumexp";
  detail::check_device(self.device().index, op);
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kFloats>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    TensorBase shift = per_row_scratch<Acc>(r.rows, self.device());
    Acc* s = mut<Acc>(shift);
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, true>{}, CastLoad<Acc>{}, ShiftStore<Acc>{s}, dev,
                     op);
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, ShiftedExpLoad<Acc>{s},
                     LogShiftStore<T, Acc>{mut<T>(out), s}, dev, op);
  });
}

void var(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self,
         const std::optional<Scalar>& correction) {
  const char* op = "var";
  detail::check_device(self.device().index, op);
  const double c = correction ? correction->to_double() : 1.0;
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kFloats | kComplex>(self.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using M = std::conditional_t<is_complex_v<T>, complex<double>, double>;
    using Out = std::conditional_t<is_complex_v<T>, real_acc_t<T>, T>;
    reduce_layout<welford::State<M>, T>(r, WelfordOp<M>{}, WelfordLoad{}, VarianceStore<Out>{mut<Out>(out), c}, dev, op);
  });
}

}  // namespace kiln::cuda
