// amax, amin, max() and min() on CPU: NaN propagates. The meta step refuses reductions over
// nothing, since max/min have no identity (PyTorch's IndexError messages).
#include "kiln/gen/kernels/cpu/amax.h"
#include "kiln/gen/kernels/cpu/amin.h"
#include "kiln/gen/kernels/cpu/max_all.h"
#include "kiln/gen/kernels/cpu/min_all.h"
#include "reducers.h"

namespace kiln::cpu {
namespace {

template <bool kMax>
void minmax(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      KILN_FAIL(DTypeError, op, "self", op, "() does not support complex inputs");
    } else {
      MinMaxReducer<T, kMax> red{static_cast<T*>(out.data_ptr())};
      run_reduce(loops, static_cast<const T*>(self.data_ptr()), red);
    }
  });
}

}  // namespace

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

}  // namespace kiln::cpu
