// arange, linspace, logspace and eye on CPU: each fills its new contiguous result; the meta
// step (kiln/meta/factories.h) has checked the arguments and picked the dtype.
#include <cstring>
#include "kiln/common/factory_values.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/arange.h"
#include "kiln/gen/kernels/cpu/eye.h"
#include "kiln/gen/kernels/cpu/linspace.h"
#include "kiln/gen/kernels/cpu/logspace.h"

namespace kiln::cpu {
namespace {

// out[i] = value(i) for every element, split across threads for large results.
template <typename T, typename F>
void fill_indexed(const TensorBase& out, const F& value) {
  T* p = static_cast<T*>(out.data_ptr());
  ::kiln::detail::parallel_range(out.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) p[i] = value(i);
  });
}

}  // namespace

void arange(const meta::RangePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!is_complex_v<T> && !std::is_same_v<T, bool>) {  // the meta step refuses both
      fill_indexed<T>(out, [&](int64_t i) {
        return factory::range_value<T>(i, plan.int_start, plan.int_step, plan.start, plan.step);
      });
    }
  });
}

void linspace(const meta::LinspacePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const auto args = factory::linspace_args<T>(plan.start.to<opmath_t<T>>(), plan.end.to<opmath_t<T>>(), plan.steps);
      fill_indexed<T>(out, [&](int64_t i) { return factory::linspace_value<T>(i, args); });
    }
  });
}

void logspace(const meta::LinspacePlan& plan, const TensorBase& out) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = factory::linspace_step_t<T>;
      const auto args = factory::linspace_args<T>(plan.start.to<opmath_t<T>>(), plan.end.to<opmath_t<T>>(), plan.steps);
      const C base = C(plan.base);
      fill_indexed<T>(out, [&](int64_t i) { return factory::logspace_value<T>(i, args, base); });
    }
  });
}

void eye(const meta::EyePlan& plan, const TensorBase& out) {
  if (out.numel() == 0) return;
  std::memset(out.data_ptr(), 0, out.nbytes());  // all-zero bits are 0 in every dtype
  const int64_t n = plan.sizes[0], m = plan.sizes[1], k = n < m ? n : m;
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < k; ++i) p[i * m + i] = T(1);
  });
}

}  // namespace kiln::cpu
