// index_select, index_add, index_copy, index_fill, take and put on CPU (geometry in
// kiln/meta/indexing.h). Every index is checked before anything is written. Writes are
// deterministic: places that meet are combined in index order, and threads split the work by
// outer slices or by columns of the inner block, never by index.
#include <cstring>
#include "index_support.h"
#include "kernel_utils.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/index_add.h"
#include "kiln/gen/kernels/cpu/index_copy.h"
#include "kiln/gen/kernels/cpu/index_fill.h"
#include "kiln/gen/kernels/cpu/index_fill_tensor.h"
#include "kiln/gen/kernels/cpu/index_select.h"
#include "kiln/gen/kernels/cpu/put.h"
#include "kiln/gen/kernels/cpu/take.h"

namespace kiln::cpu {
namespace {

int64_t wrapped(int64_t i, int64_t size) { return i < 0 ? i + size : i; }

// fn(o0, o1, c0, c1) over outer slices [o0, o1) and inner columns [c0, c1): split by slices when
// there are enough of them, else by columns, so that no two threads write one place.
template <typename Fn>
void split_places(const meta::IndexPlan& plan, const Fn& fn) {
  const int64_t outer = plan.split.outer, inner = plan.split.inner, work = outer * plan.n * inner;
  const int threads = kiln::detail::threads_for(work, std::max(outer, inner));
  if (outer >= threads) {
    kiln::detail::parallel_chunks(outer, threads, 1, [&](int64_t b, int64_t e) { fn(b, e, int64_t(0), inner); });
  } else {
    kiln::detail::parallel_chunks(inner, threads, 16, [&](int64_t b, int64_t e) { fn(int64_t(0), outer, b, e); });
  }
}

// out = self, then for every index i and slice o: row(out line at index[i], source line i).
template <typename T, typename Row>
void update_rows(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const int64_t* idx,
                 const Row& row) {
  out.copy_(self);
  const int64_t S = plan.split.size, inner = plan.split.inner, n = plan.n;
  if (inner == 0 || plan.split.outer == 0) return;  // no element to write (out may hold no storage)
  T* y = static_cast<T*>(out.data_ptr());
  split_places(plan, [&](int64_t o0, int64_t o1, int64_t c0, int64_t c1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t i = 0; i < n; ++i) row(y + (o * S + wrapped(idx[i], S)) * inner, (o * n + i) * inner, c0, c1);
  });
}

template <typename T>
T add_scaled(T y, T x, T alpha) {
  if constexpr (std::is_same_v<T, bool>) return y || (x && alpha);
  else {
    using M = opmath_t<T>;
    return T(M(y) + M(alpha) * M(x));
  }
}

}  // namespace

void index_select(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                  int64_t /*dim*/) {
  const Indices idx = int64_indices(index);
  const int64_t S = plan.split.size, inner = plan.split.inner, n = plan.n;
  check_indices(idx.data, n, S, false, "index_select", plan.dim);
  if (out.numel() == 0) return;  // self may be an empty view whose storage has no data to offset into
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    E* y = static_cast<E*>(out.data_ptr());
    kiln::detail::parallel_items(plan.split.outer * n, inner, [&](int64_t b, int64_t e) {
      // walk (slice o, entry i) from b without a division per element
      for (int64_t k = b, o = b / n, i = b % n; k < e; ++k) {
        const E* from = x + (o * S + idx.data[i]) * inner;
        if (inner == 1) y[k] = *from;
        else std::memcpy(y + k * inner, from, size_t(inner) * sizeof(E));
        if (++i == n) {
          i = 0;
          ++o;
        }
      }
    });
  });
}

void index_add(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
               const TensorBase& source, int64_t /*dim*/, const Scalar& alpha) {
  const Indices idx = int64_indices(index);
  check_indices(idx.data, plan.n, plan.split.size, false, "index_add", plan.dim);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(source.data_ptr());
    const T a = alpha.to<T>();
    update_rows<T>(plan, out, self, idx.data, [&](T* y, int64_t from, int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) y[c] = add_scaled(y[c], x[from + c], a);
    });
  });
}

void index_copy(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                const TensorBase& source, int64_t /*dim*/) {
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  check_indices(idx, plan.n, plan.split.size, false, "index_copy", plan.dim);
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(source.data_ptr());
    update_rows<E>(plan, out, self, idx, [&](E* y, int64_t from, int64_t c0, int64_t c1) {
      std::memcpy(y + c0, x + from + c0, size_t(c1 - c0) * sizeof(E));
    });
  });
}

void index_fill(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                int64_t /*dim*/, const Scalar& value) {
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  check_indices(idx, plan.n, plan.split.size, true, "index_fill", plan.dim);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    update_rows<T>(plan, out, self, idx, [&](T* y, int64_t, int64_t c0, int64_t c1) { std::fill(y + c0, y + c1, v); });
  });
}

void index_fill_tensor(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self,
                       const TensorBase& index, const TensorBase& value, int64_t dim) {
  index_fill(plan, out, self, index, dim, value.item());  // cast to self's dtype as PyTorch's .item()
}

void take(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index) {
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  const int64_t size = plan.split.size;
  check_indices(idx, plan.n, size, true, "take", 0);
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    E* y = static_cast<E*>(out.data_ptr());
    kiln::detail::parallel_range(plan.n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) y[i] = x[wrapped(idx[i], size)];
    });
  });
}

void put(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
         const TensorBase& source, bool accumulate) {
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  const int64_t size = plan.split.size;
  check_indices(idx, plan.n, size, true, "put", 0);
  out.copy_(self);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(source.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const T one = Scalar(1).to<T>();
    for (int64_t i = 0; i < plan.n; ++i) {  // in index order: the last write or the sum is PyTorch's
      T& at = y[wrapped(idx[i], size)];
      at = accumulate ? add_scaled(at, x[i], one) : x[i];
    }
  });
}

}  // namespace kiln::cpu
