#ifndef KILN_KERNELS_CPU_SCAN_ENGINE_H_
#define KILN_KERNELS_CPU_SCAN_ENGINE_H_
// The CPU scan engine: runs a combine rule (kiln/common/scan_rules.h) along plan.dim of a
// contiguous input, [outer, D, inner] as the meta step split it. The last dim (inner == 1)
// scans each row; otherwise each step combines a whole unit-stride row of inner elements into
// the running values, which vectorizes. Rows of the outer dim run in parallel; every element
// is combined in scan order, so results do not depend on the thread count.
#include <algorithm>
#include <vector>
#include "kiln/common/scan_rules.h"
#include "kiln/meta/along_dim.h"
#include "kiln/cpu/parallel.h"

namespace kiln::cpu {

// Stores a rule's value into the result.
template <typename T, typename Rule>
struct StoreValue {
  T* out;
  void operator()(int64_t at, const typename Rule::Acc& a) const { out[at] = T(Rule::value(a)); }
};
// Stores the value and the index (cummax, cummin).
template <typename T, typename Rule>
struct StoreValueIndex {
  T* out;
  int64_t* indices;
  void operator()(int64_t at, const typename Rule::Acc& a) const {
    out[at] = T(Rule::value(a));
    indices[at] = Rule::index(a);
  }
};

template <typename Rule, bool kReverse = false, typename T, typename Store>
void run_scan(const meta::AlongDimPlan& plan, const T* in, const Store& store) {
  using Acc = typename Rule::Acc;
  const int64_t outer = plan.split.outer, D = plan.split.size, inner = plan.split.inner;
  if (outer * D * inner == 0) return;
  if (inner == 1) {
    // One row after another. (Interleaving several rows for more independent combines was
    // slower: rows of 1024 floats sit 4 KiB apart and collide in L1 sets.)
    kiln::detail::parallel_items(outer, D, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* x = in + o * D;
        Acc acc = Rule::identity();
        for (int64_t step = 0; step < D; ++step) {
          const int64_t d = kReverse ? D - 1 - step : step;
          acc = Rule::combine(acc, Rule::load(x[d], d));
          store(o * D + d, acc);
        }
      }
    });
    return;
  }
  kiln::detail::parallel_items(outer, D * inner, [&](int64_t b, int64_t e) {
    std::vector<Acc> acc(static_cast<size_t>(inner));
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), Rule::identity());
      for (int64_t step = 0; step < D; ++step) {
        const int64_t d = kReverse ? D - 1 - step : step;
        const int64_t row = (o * D + d) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          acc[size_t(i)] = Rule::combine(acc[size_t(i)], Rule::load(in[row + i], d));
          store(row + i, acc[size_t(i)]);
        }
      }
    }
  });
}

// Rule over self (contiguous, of plan.dtype) into the store make_store(T{}) builds for its
// element type.
template <template <typename> class RuleOf, bool kReverse, typename MakeStore>
void scan_into(const meta::AlongDimPlan& plan, const TensorBase& self, const char* op, MakeStore&& make_store) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (RuleOf<T>::kDefined) {
      run_scan<RuleOf<T>, kReverse>(plan, static_cast<const T*>(self.data_ptr()), make_store(tag));
    } else {
      KILN_FAIL(InternalError, op, "self", "no scan kernel for dtype ", dtype_name(plan.dtype));
    }
  });
}

// A scan with one result.
template <template <typename> class RuleOf, bool kReverse = false>
void scan_values(const meta::AlongDimPlan& plan, const TensorBase& out, const TensorBase& self, const char* op) {
  scan_into<RuleOf, kReverse>(plan, self, op, [&](auto tag) {
    using T = decltype(tag);
    return StoreValue<T, RuleOf<T>>{static_cast<T*>(out.data_ptr())};
  });
}

// A scan with values and their int64 indices (cummax, cummin).
template <template <typename> class RuleOf>
void scan_values_indices(const meta::AlongDimPlan& plan, const TensorBase& values, const TensorBase& indices,
                         const TensorBase& self, const char* op) {
  scan_into<RuleOf, false>(plan, self, op, [&](auto tag) {
    using T = decltype(tag);
    return StoreValueIndex<T, RuleOf<T>>{static_cast<T*>(values.data_ptr()), static_cast<int64_t*>(indices.data_ptr())};
  });
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_SCAN_ENGINE_H_
