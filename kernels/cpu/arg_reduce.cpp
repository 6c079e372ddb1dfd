// max.dim, min.dim, argmax and argmin on CPU: the first occurrence wins ties, and a NaN counts
// as larger (max) or smaller (min) than everything, so the first NaN is selected, as PyTorch.
#include "kiln/gen/kernels/cpu/argmax.h"
#include "kiln/gen/kernels/cpu/argmin.h"
#include "kiln/gen/kernels/cpu/max_dim.h"
#include "kiln/gen/kernels/cpu/min_dim.h"
#include "kiln/meta/inputs.h"
#include "reducers.h"

namespace kiln::cpu {
namespace {

template <typename T, bool kMax>
struct ArgReducer {
  using in_t = T;
  using V = opmath_t<T>;
  struct acc_t {
    V v{};
    int64_t i = -1;  // -1: nothing seen yet
  };
  T* values;         // may be null (argmax/argmin)
  int64_t* indices;

  static KILN_INLINE bool better(V x, V v) {
    if constexpr (std::is_floating_point_v<V>) {
      // a NaN beats any number, so the first NaN wins; bitwise ops keep this branch-free
      return (bool(x != x) & bool(v == v)) | bool(kMax ? x > v : x < v);
    } else {
      return kMax ? x > v : x < v;
    }
  }
  acc_t init(int64_t) const { return {}; }
  KILN_INLINE void step(acc_t& a, T x, int64_t r) const {
    V xv = V(x);
    if (a.i < 0 || better(xv, a.v)) { a.v = xv; a.i = r; }
  }
  // Contiguous runs in one vectorized pass: 16 lanes each keep the first best (value, index)
  // of their own elements, then the lanes combine with ties going to the lower index, and the
  // result is merged after `a` (which covers earlier indices).
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const {
    constexpr int kLanes = 16;
    if (s != 1 || n < 4 * kLanes) {
      run_by_steps(*this, a, p, n, s, r);
      return;
    }
    V lv[kLanes];
    int64_t li[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      lv[k] = V(p[k]);
      li[k] = k;
    }
    int64_t i = kLanes;
    for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
      for (int k = 0; k < kLanes; ++k) {
        const V x = V(p[i + k]);
        const bool b = better(x, lv[k]);
        lv[k] = b ? x : lv[k];
        li[k] = b ? i + k : li[k];
      }
    }
    acc_t best{lv[0], li[0]};
    for (int k = 1; k < kLanes; ++k)
      if (better(lv[k], best.v) || (!better(best.v, lv[k]) && li[k] < best.i)) best = {lv[k], li[k]};
    for (; i < n; ++i)
      if (better(V(p[i]), best.v)) best = {V(p[i]), i};
    best.i += r;
    merge(a, best);
  }
  void merge(acc_t& a, const acc_t& b) const {
    if (b.i >= 0 && (a.i < 0 || better(b.v, a.v))) a = b;
  }
  void write(int64_t o, const acc_t& a) const {
    if (values) values[o] = T(a.v);
    indices[o] = a.i;
  }
};

// Values (optional) and int64 indices of the max/min along the reduction `plan` of `in`.
// `in` must reduce over a single dim, or be contiguous when reducing all (flat indices).
template <bool kMax>
void arg_reduce(const meta::ReducePlan& plan, const TensorBase& in, const TensorBase* values, const TensorBase& indices,
                const char* op) {
  ReduceLoops loops = make_reduce_loops(in, plan);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_complex_v<T>) {
      KILN_FAIL(DTypeError, op, "self", op, "() does not support complex inputs");
    } else {
      ArgReducer<T, kMax> red{values ? static_cast<T*>(values->data_ptr()) : nullptr,
                              static_cast<int64_t*>(indices.data_ptr())};
      run_reduce(loops, static_cast<const T*>(in.data_ptr()), red);
    }
  });
}

}  // namespace

void max_dim(const meta::ReducePlan& plan, const TensorBase& values, const TensorBase& indices,
             const TensorBase& self) {
  arg_reduce<true>(plan, self, &values, indices, "max");
}
void min_dim(const meta::ReducePlan& plan, const TensorBase& values, const TensorBase& indices,
             const TensorBase& self) {
  arg_reduce<false>(plan, self, &values, indices, "min");
}
// dim=None reduces every dim: the index is into the flattened tensor, so the walk must be in
// row-major order (a contiguous copy).
void argmax(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  arg_reduce<true>(plan, plan.all_dims ? meta::contiguous_input(self) : self, nullptr, out, "argmax");
}
void argmin(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  arg_reduce<false>(plan, plan.all_dims ? meta::contiguous_input(self) : self, nullptr, out, "argmin");
}

}  // namespace kiln::cpu
