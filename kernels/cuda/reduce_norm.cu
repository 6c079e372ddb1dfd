// norm and count_nonzero on CUDA, on the reduction kernels of reduce.cu (reduce_layout.cuh).
// norm: p = 2, 1, 0 and other finite p sum a function of |x| and finish with sqrt / pow(1/p);
// p = +-inf take the max / min of |x| (NaN propagates; an empty reduction gives 0, as PyTorch).
// 16-bit inputs accumulate in float32; complex ones take |z| = hypot(re, im) and give a real
// norm. count_nonzero counts x != 0 (NaN counts) in int64.
#include <cuda_runtime.h>
#include <cmath>
#include "reduce_layout.cuh"
#include "kiln/gen/kernels/cuda/count_nonzero.h"
#include "kiln/gen/kernels/cuda/norm.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using namespace reduce_detail;

enum class NormKind { Two, One, Zero, General, Magnitude };  // Magnitude: |x|, for p = +-inf

template <typename Acc, typename T>
__device__ Acc magnitude(T x) {
  if constexpr (is_complex_v<T>) return ::hypot(Acc(x.re), Acc(x.im));
  else return ::fabs(Acc(x));
}

template <typename Acc, NormKind K>
struct NormLoad {
  Acc p;
  template <typename T>
  __device__ Acc operator()(T x, int64_t, int64_t) const {
    const Acc a = magnitude<Acc>(x);
    if constexpr (K == NormKind::Two) return a * a;
    else if constexpr (K == NormKind::Zero) return a != Acc(0) ? Acc(1) : Acc(0);  // NaN counts, as the CPU
    else if constexpr (K == NormKind::General) return ::pow(a, p);
    else return a;
  }
};

template <typename Out, typename Acc, NormKind K>
struct NormStore {
  Out* out;
  Acc p;
  bool empty;  // nothing reduced: +-inf norms give 0, not the max/min identity
  __device__ void operator()(int64_t g, Acc a) const {
    if constexpr (K == NormKind::Two) a = ::sqrt(a);
    else if constexpr (K == NormKind::General) a = ::pow(a, Acc(1) / p);
    else if constexpr (K == NormKind::Magnitude) a = empty ? Acc(0) : a;
    out[g] = Out(a);
  }
};

struct NonzeroLoad {
  template <typename T>
  __device__ int64_t operator()(T x, int64_t, int64_t) const { return acc_t<T>(x) != acc_t<T>(0) ? 1 : 0; }
};

template <typename T, typename Op, NormKind K>
void run_norm(const Rows& r, const Op& op, const TensorBase& out, double p, int dev) {
  using Acc = real_acc_t<T>;
  using Out = std::conditional_t<is_complex_v<T>, Acc, T>;  // a complex tensor's norm is real
  reduce_layout<Acc, T>(r, op, NormLoad<Acc, K>{Acc(p)}, NormStore<Out, Acc, K>{mut<Out>(out), Acc(p), r.len == 0},
                        dev, "norm");
}

}  // namespace

void norm(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self, const std::optional<Scalar>& p) {
  const double pv = meta::norm_order("norm", p);
  detail::check_device(self.device().index, "norm");
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  visit<kFloats | kComplex>(self.dtype(), "norm", [&](auto tag) {
    using T = decltype(tag);
    using Acc = real_acc_t<T>;
    const Rows r = as_rows(self, plan);
    if (pv == 2.0) run_norm<T, SumOp<Acc>, NormKind::Two>(r, SumOp<Acc>{}, out, pv, dev);
    else if (pv == 1.0) run_norm<T, SumOp<Acc>, NormKind::One>(r, SumOp<Acc>{}, out, pv, dev);
    else if (pv == 0.0) run_norm<T, SumOp<Acc>, NormKind::Zero>(r, SumOp<Acc>{}, out, pv, dev);
    else if (std::isinf(pv) && pv > 0) run_norm<T, MinMaxOp<Acc, true>, NormKind::Magnitude>(r, {}, out, pv, dev);
    else if (std::isinf(pv)) run_norm<T, MinMaxOp<Acc, false>, NormKind::Magnitude>(r, {}, out, pv, dev);
    else run_norm<T, SumOp<Acc>, NormKind::General>(r, SumOp<Acc>{}, out, pv, dev);
  });
}

void count_nonzero(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  detail::check_device(self.device().index, "count_nonzero");
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  visit<kAll>(self.dtype(), "count_nonzero", [&](auto tag) {
    using T = decltype(tag);
    reduce_layout<int64_t, T>(as_rows(self, plan), SumOp<int64_t>{}, NonzeroLoad{}, CastStore<int64_t>{mut<int64_t>(out)},
                              dev, "count_nonzero");
  });
}

}  // namespace kiln::cuda
