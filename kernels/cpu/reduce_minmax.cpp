// amax, amin, max() and min() on CPU: NaN propagates; reductions over nothing are errors,
// since max/min have no identity (PyTorch's IndexError messages).
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/reducers.h"

namespace kiln::cpu {
namespace {

template <bool kMax>
Tensor minmax(const Tensor& self, IntArrayRef dim, bool keepdim, const char* op) {
  ReduceDims rd = reduce_dims(self, dim, keepdim, op);
  check_nonempty_reduction(self, rd, dim.empty(), op);
  Tensor out = empty(rd.out_sizes, TensorOptions(self.dtype()));
  ReducePlan plan = make_reduce_plan(self, rd);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      KILN_FAIL(DTypeError, op, "self", op, "() does not support complex inputs");
    } else {
      MinMaxReducer<T, kMax> red{static_cast<T*>(out.data_ptr())};
      run_reduce(plan, static_cast<const T*>(self.data_ptr()), red);
    }
  });
  return out;
}

}  // namespace

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) { return minmax<true>(self, dim, keepdim, "amax"); }
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) { return minmax<false>(self, dim, keepdim, "amin"); }
Tensor max_all(const Tensor& self) { return minmax<true>(self, {}, false, "max"); }
Tensor min_all(const Tensor& self) { return minmax<false>(self, {}, false, "min"); }

}  // namespace kiln::cpu
