// gather and the scatter family on CPU (geometry in kiln/meta/indexing.h). Every index is checked
// before anything is written. scatter is deterministic: elements that meet at one place are
// combined in index order, and threads split the work so that no two of them write one place
// (rows when scattering along the last dim, else the last dim's columns).
#include <algorithm>
#include <vector>
#include "index_support.h"
#include "kiln/common/scatter_rules.h"
#include "kernel_utils.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/gather.h"
#include "kiln/gen/kernels/cpu/scatter.h"
#include "kiln/gen/kernels/cpu/scatter_add.h"
#include "kiln/gen/kernels/cpu/scatter_reduce.h"
#include "kiln/gen/kernels/cpu/scatter_value_with_reduce.h"
#include "kiln/gen/kernels/cpu/scatter_with_reduce.h"
#include "kiln/gen/kernels/cpu/scatter_value.h"

namespace kiln::cpu {
namespace {

using meta::ScatterReduce;

void check_index(const meta::ScatterGatherPlan& plan, const TensorBase& index, int64_t size, const char* op) {
  check_indices(static_cast<const int64_t*>(index.data_ptr()), index.numel(), size, false, op, plan.dim);
}

int64_t size_at(const TensorBase& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }

// visit(out_offset, src_offset) for every index element, in index order within each place of
// out; threads never share a place of out.
template <typename Visit>
void for_each_scatter(const RowGeometry& g, const int64_t* idx, const Visit& visit) {
  const int64_t len = g.len, ds = g.dim_stride();
  const bool along_last = g.dim == g.ndim - 1;
  auto rows = [&](int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t at_out, at_src;
      g.row_offsets(r, at_out, at_src);
      const int64_t* row_idx = idx + r * len;
      if (along_last) {
        for (int64_t j = j0; j < j1; ++j) visit(at_out + row_idx[j], at_src + j);
      } else {
        for (int64_t j = j0; j < j1; ++j) visit(at_out + row_idx[j] * ds + j, at_src + j);
      }
    }
  };
  if (along_last) {  // each row writes its own line of out
    kiln::detail::parallel_items(g.rows, len, [&](int64_t b, int64_t e) { rows(b, e, 0, len); });
  } else {  // each column of the last dim writes its own places
    kiln::detail::parallel_chunks(len, kiln::detail::threads_for(g.rows * len, len), 1,
                                  [&](int64_t b, int64_t e) { rows(0, g.rows, b, e); });
  }
}

// src combined into y at the indexed places by rule R (mean also counts what meets at each).
template <ScatterReduce R, typename T, typename Src>
void combine_all(const RowGeometry& g, const int64_t* idx, T* y, const Src& src, int64_t* count) {
  for_each_scatter(g, idx, [&](int64_t to, int64_t from) {
    y[to] = scatter::Rule<T>::apply(R, y[to], src(from));
    if constexpr (R == ScatterReduce::Mean) ++count[to];
  });
}

// out = self, then src (or value) combined into out at the indexed places.
template <typename Src>
void scatter_into(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                  const TensorBase& index, IntArrayRef src_sizes, const Src& src_of, const char* op) {
  check_index(plan, index, size_at(self, plan.dim), op);
  out.copy_(self);
  if (index.numel() == 0) return;
  const RowGeometry g(index.sizes(), self.sizes(), src_sizes, plan.dim);
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y = static_cast<T*>(out.data_ptr());
    const auto src = src_of(tag);
    const ScatterReduce r = plan.reduce;
    if (r == ScatterReduce::None) {
      for_each_scatter(g, idx, [&](int64_t to, int64_t from) { y[to] = src(from); });
      return;
    }
    if (!plan.include_self)  // the places written start from the reduction's identity
      for_each_scatter(g, idx, [&](int64_t to, int64_t) { y[to] = scatter::Rule<T>::identity(r); });
    std::vector<int64_t> count;
    if (r == ScatterReduce::Mean) count.assign(size_t(out.numel()), plan.include_self ? 1 : 0);
    switch (r) {  // the rule as a constant, so the inner loop has no switch
      case ScatterReduce::Sum: combine_all<ScatterReduce::Sum>(g, idx, y, src, nullptr); break;
      case ScatterReduce::Prod: combine_all<ScatterReduce::Prod>(g, idx, y, src, nullptr); break;
      case ScatterReduce::Mean: combine_all<ScatterReduce::Mean>(g, idx, y, src, count.data()); break;
      case ScatterReduce::Amax: combine_all<ScatterReduce::Amax>(g, idx, y, src, nullptr); break;
      case ScatterReduce::Amin: combine_all<ScatterReduce::Amin>(g, idx, y, src, nullptr); break;
      case ScatterReduce::None: break;
    }
    if (r == ScatterReduce::Mean)
      for (int64_t i = 0; i < out.numel(); ++i)
        if (count[size_t(i)] > 1) y[i] = scatter::Rule<T>::divide(y[i], count[size_t(i)]);
  });
}

auto tensor_source(const TensorBase& src) {
  return [&src](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(src.data_ptr());
    return [x](int64_t i) { return x[i]; };
  };
}

auto value_source(const Scalar& value) {
  return [&value](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    return [v](int64_t) { return v; };
  };
}

}  // namespace

void gather(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
            int64_t /*dim*/, bool /*sparse_grad*/) {
  check_index(plan, index, size_at(self, plan.dim), "gather");
  if (index.numel() == 0) return;
  const RowGeometry g(index.sizes(), self.sizes(), index.sizes(), plan.dim);
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  const int64_t len = g.len, ds = g.dim_stride();
  const bool along_last = g.dim == g.ndim - 1;
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    E* y = static_cast<E*>(out.data_ptr());
    kiln::detail::parallel_items(g.rows, len, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t at_self, at_out;
        g.row_offsets(r, at_self, at_out);
        const int64_t* row_idx = idx + at_out;
        E* row_out = y + at_out;
        if (along_last) {
          for (int64_t j = 0; j < len; ++j) row_out[j] = x[at_self + row_idx[j]];
        } else {
          for (int64_t j = 0; j < len; ++j) row_out[j] = x[at_self + row_idx[j] * ds + j];
        }
      }
    });
  });
}

void scatter(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
             const TensorBase& index, const TensorBase& src, int64_t /*dim*/) {
  scatter_into(plan, out, self, index, src.sizes(), tensor_source(src), "scatter");
}

void scatter_value(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                   const TensorBase& index, int64_t /*dim*/, const Scalar& value) {
  scatter_into(plan, out, self, index, index.sizes(), value_source(value), "scatter");
}

void scatter_with_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                         const TensorBase& index, const TensorBase& src, int64_t /*dim*/, std::string_view /*reduce*/) {
  scatter_into(plan, out, self, index, src.sizes(), tensor_source(src), "scatter");
}

void scatter_value_with_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                               const TensorBase& index, int64_t /*dim*/, const Scalar& value,
                               std::string_view /*reduce*/) {
  scatter_into(plan, out, self, index, index.sizes(), value_source(value), "scatter");
}

void scatter_add(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                 const TensorBase& index, const TensorBase& src, int64_t /*dim*/) {
  scatter_into(plan, out, self, index, src.sizes(), tensor_source(src), "scatter_add");
}

void scatter_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                    const TensorBase& index, const TensorBase& src, int64_t /*dim*/, std::string_view /*reduce*/,
                    bool /*include_self*/) {
  scatter_into(plan, out, self, index, src.sizes(), tensor_source(src), "scatter_reduce");
}

}  // namespace kiln::cpu
