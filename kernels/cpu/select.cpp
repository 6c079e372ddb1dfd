// kthvalue, median, nanmedian and mode on CPU: each line is radix-sorted (stable, NaN last)
// and the answer read off the sorted order, lines in parallel.
#include <limits>
#include "kiln/gen/kernels/cpu/kthvalue.h"
#include "kiln/gen/kernels/cpu/median_all.h"
#include "kiln/gen/kernels/cpu/median_dim.h"
#include "kiln/gen/kernels/cpu/mode.h"
#include "kiln/gen/kernels/cpu/nanmedian_all.h"
#include "kiln/gen/kernels/cpu/nanmedian_dim.h"
#include "sort_lines.h"

namespace kiln::cpu {
namespace {

using sort_keys::Pick;

void select_lines(Pick how, const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                  const TensorBase& self) {
  visit_sortable(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    using K = typename SortKey<T>::K;
    const T* x = static_cast<const T*>(self.data_ptr());
    T* v = static_cast<T*>(values.data_ptr());
    int64_t* ind = indices.defined() ? static_cast<int64_t*>(indices.data_ptr()) : nullptr;
    const int64_t n = plan.split.size, inner = plan.split.inner;
    if (n == 0) {  // median() of no elements: NaN (an integer result gets NaN's conversion, as PyTorch)
      v[0] = convert<T>(std::numeric_limits<float>::quiet_NaN());
      return;
    }
    for_each_line(plan, x, false, [&](LineScratch<K>& s, int64_t base, int64_t l) {
      radix_sort_line(s, n);
      const int64_t at = sort_keys::pick_place<T>(how, plan.rank, s.keys.data(), n), from = s.idx[size_t(at)];
      v[l] = value_of<T>(s.keys[size_t(at)], x, base + from * inner);
      if (ind) ind[l] = from;
    });
  });
}

}  // namespace

void kthvalue(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  select_lines(Pick::Rank, plan, values, indices, self);
}
void median_dim(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                const TensorBase& self) {
  select_lines(Pick::Median, plan, values, indices, self);
}
void nanmedian_dim(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices,
                   const TensorBase& self) {
  select_lines(Pick::NanMedian, plan, values, indices, self);
}
void mode(const meta::SortPlan& plan, const TensorBase& values, const TensorBase& indices, const TensorBase& self) {
  select_lines(Pick::Mode, plan, values, indices, self);
}
void median_all(const meta::SortPlan& plan, const TensorBase& out, const TensorBase& self) {
  select_lines(Pick::Median, plan, out, TensorBase(), self);
}
void nanmedian_all(const meta::SortPlan& plan, const TensorBase& out, const TensorBase& self) {
  select_lines(Pick::NanMedian, plan, out, TensorBase(), self);
}

}  // namespace kiln::cpu
