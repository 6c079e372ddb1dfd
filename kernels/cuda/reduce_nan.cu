// nansum, nanmean and aminmax on CUDA, on the reduction kernels of reduce.cu
// (reduce_layout.cuh): NaN-skipping sums (nanmean counts the non-NaN elements in a first pass,
// then divides the rounded sum by that count, as the CPU), and the min and max of one reduction
// in two passes (NaN propagates, as amax/amin).
#include <cuda_runtime.h>
#include "reduce_layout.cuh"
#include "kiln/gen/kernels/cuda/aminmax.h"
#include "kiln/gen/kernels/cuda/nanmean.h"
#include "kiln/gen/kernels/cuda/nansum.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using namespace reduce_detail;

template <typename Acc>
struct NaNAsZeroLoad {
  template <typename T>
  __device__ Acc operator()(T x, int64_t, int64_t) const {
    const Acc v = Acc(x);
    return v != v ? Acc(0) : v;
  }
};
template <typename Acc>
struct NotNaNLoad {  // 1 per non-NaN element
  template <typename T>
  __device__ Acc operator()(T x, int64_t, int64_t) const {
    const Acc v = Acc(x);
    return v != v ? Acc(0) : Acc(1);
  }
};
template <typename Out, typename Acc>
struct DivideByCountStore {
  Out* out;
  const Acc* counts;  // per result
  __device__ void operator()(int64_t g, Acc a) const { out[g] = Out(Acc(Out(a)) / counts[g]); }
};

}  // namespace

void nansum(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  detail::check_device(self.device().index, "nansum");
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kReal>(self.dtype(), "nansum", [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    if constexpr (std::is_integral_v<T>) {
      if (plan.dtype != self.dtype()) {  // integers accumulate into int64
        reduce_layout<Acc, T>(r, SumOp<Acc>{}, CastLoad<Acc>{}, CastStore<int64_t>{mut<int64_t>(out)}, dev, "nansum");
        return;
      }
    }
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, NaNAsZeroLoad<Acc>{}, CastStore<T>{mut<T>(out)}, dev, "nansum");
  });
}

void nanmean(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  detail::check_device(self.device().index, "nanmean");
  if (out.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kFloats>(self.dtype(), "nanmean", [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    TensorBase counts = kiln::detail::empty_dense(
        {r.rows}, TensorOptions(std::is_same_v<Acc, double> ? DType::Float64 : DType::Float32, self.device()));
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, NotNaNLoad<Acc>{}, CastStore<Acc>{mut<Acc>(counts)}, dev, "nanmean");
    reduce_layout<Acc, T>(r, SumOp<Acc>{}, NaNAsZeroLoad<Acc>{}, DivideByCountStore<T, Acc>{mut<T>(out), mut<Acc>(counts)},
                          dev, "nanmean");
  });
}

void aminmax(const meta::ReducePlan& plan, const TensorBase& min, const TensorBase& max, const TensorBase& self) {
  detail::check_device(self.device().index, "aminmax");
  if (min.numel() == 0) return;
  const int dev = self.device().index;
  DeviceGuard guard(dev);
  Rows r = as_rows(self, plan);
  visit<kReal>(self.dtype(), "aminmax", [&](auto tag) {
    using T = decltype(tag);
    using Acc = acc_t<T>;
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, false>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(min)}, dev, "aminmax");
    reduce_layout<Acc, T>(r, MinMaxOp<Acc, true>{}, CastLoad<Acc>{}, CastStore<T>{mut<T>(max)}, dev, "aminmax");
  });
}

}  // namespace kiln::cuda
