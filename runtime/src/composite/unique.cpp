// unique, unique_dim and unique_consecutive (PyTorch 1.13's semantics and messages) composed of
// sort, cumsum and scatter: equal neighbours after the (stable) sort form a group, a group's id
// is the count of group starts before it, and the one read to the host is the group count that
// sizes the results (a sync on CUDA, as PyTorch's). On the CPU, integers whose range is no wider
// than their count are counted instead of sorted. Results are the same for any thread count.
#include <optional>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_bincount.h"
#include "kiln/gen/api/aminmax.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/ne.h"
#include "kiln/gen/api/nonzero.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/scatter_add.h"
#include "kiln/gen/api/scatter_reduce.h"
#include "kiln/gen/api/sort.h"
#include "kiln/gen/api/_unique2.h"
#include "kiln/gen/api/unique_dim.h"

namespace kiln::composite {
namespace {

using Triple = std::tuple<Tensor, Tensor, Tensor>;

// Group ids of n sorted elements (or rows), given `differs`: element i + 1 differs from element i.
struct Groups {
  Tensor ids;  // int64 [n]
  int64_t count = 0;
};

Groups group_ids(const Tensor& differs, int64_t n, Device device) {
  if (n == 0) return {kiln::empty({0}, TensorOptions(DType::Int64, device)), 0};
  const Tensor first = kiln::zeros({1}, TensorOptions(DType::Int64, device));
  const Tensor ids = kiln::cat({first, kiln::cumsum(differs, 0, DType::Int64)}, 0);
  return {ids, ids.select(0, n - 1).item<int64_t>() + 1};
}

Tensor empty_long(Device device) { return kiln::empty({0}, TensorOptions(DType::Int64, device)); }

// How many elements each group holds.
Tensor group_counts(const Groups& g, Device device) {
  const Tensor zeros = kiln::zeros({g.count}, TensorOptions(DType::Int64, device));
  return kiln::scatter_add(zeros, 0, g.ids, kiln::ones_like(g.ids));
}

// Element i's group id, for elements that went to sorted position `perm`'s inverse.
Tensor inverse_through(const Groups& g, const Tensor& perm, Device device) {
  const Tensor out = kiln::empty({perm.numel()}, TensorOptions(DType::Int64, device));
  return kiln::scatter(out, 0, perm, g.ids);
}

// Rows [n, m] next to each other that differ anywhere: [n - 1] bool.
Tensor rows_differ(const Tensor& rows) {
  const int64_t n = rows.size(0);
  if (n < 2) return kiln::empty({0}, TensorOptions(DType::Bool, rows.device()));
  return kiln::any(kiln::ne(rows.narrow(0, 1, n - 1), rows.narrow(0, 0, n - 1)), 1);
}

// First row of each group, as the group's representative.
Tensor first_rows(const Tensor& rows, const Groups& g) {
  const int64_t n = rows.size(0);
  const Tensor positions = kiln::arange(n, TensorOptions(DType::Int64, rows.device()));
  const Tensor start = kiln::full({g.count}, n, TensorOptions(DType::Int64, rows.device()));
  const Tensor firsts = kiln::scatter_reduce(start, 0, g.ids, positions, "amin", false);
  return kiln::index_select(rows, 0, firsts);
}

// self's slices along dim as rows [size(dim), rest].
Tensor slices_as_rows(const Tensor& self, int64_t d, const char* op) {
  if (self.numel() == 0) {  // PyTorch's checks, in its order
    int zero_dims = 0;
    for (int64_t s : self.sizes()) zero_dims += s == 0;
    KILN_CHECK(self.size(d) == 0, ValueError, op, "self",
               "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    KILN_CHECK(zero_dims == 1, ValueError, op, "self",
               "Number of zero sized dimensions is more than one, so unique cannot be applied ");
  }
  const Tensor moved = self.movedim(d, 0).contiguous();
  int64_t rest = 1;
  for (int64_t i = 1; i < moved.dim(); ++i) rest *= moved.size(i);
  return moved.reshape({moved.size(0), rest});
}

// Rows back to self's layout with `count` slices along dim d.
Tensor rows_as_slices(const Tensor& rows, const Tensor& self, int64_t d, int64_t count) {
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes.erase(sizes.begin() + d);
  sizes.insert(sizes.begin(), count);
  return rows.reshape(sizes).movedim(0, d);
}

Triple unique_rows(const Tensor& self, int64_t d, bool sort_rows, const char* op) {
  const Device device = self.device();
  const Tensor rows = slices_as_rows(self, d, op);
  const int64_t n = rows.size(0), m = rows.size(1);
  Tensor perm = kiln::arange(n, TensorOptions(DType::Int64, device));
  if (sort_rows) {
    // lexicographic order: stable sorts from the last column to the first
    for (int64_t j = m - 1; j >= 0; --j) {
      const Tensor column = kiln::index_select(rows.select(1, j), 0, perm);
      perm = kiln::index_select(perm, 0, std::get<1>(kiln::sort(column, 0, false)));
    }
  }
  const Tensor sorted = sort_rows ? kiln::index_select(rows, 0, perm) : rows;
  const Groups g = group_ids(rows_differ(sorted), n, device);
  const Tensor output = rows_as_slices(first_rows(sorted, g), self, d, g.count);
  // PyTorch's dim forms return inverse and counts whatever the flags say
  const Tensor inverse = sort_rows ? inverse_through(g, perm, device) : g.ids;
  return {output, inverse, group_counts(g, device)};
}

// unique of a CPU integer line whose values span at most its length, by counting: one count per
// value in [min, max] (_bincount), the present values in ascending order (nonzero), an element's
// inverse the number of present values below it (cumsum). O(n) time and memory where a sort
// would be O(n log n) or several radix passes; PyTorch's own CPU unique hashes.
std::optional<Triple> unique_by_counting(const Tensor& flat, const IntArrayRef& shape, bool inverse_too,
                                         bool return_counts) {
  const int64_t n = flat.numel();
  if (!flat.device().is_cpu() || n == 0 || !is_integral(flat.dtype(), /*include_bool=*/false)) return std::nullopt;
  const auto [lo_t, hi_t] = kiln::aminmax(flat);
  const int64_t lo = lo_t.item<int64_t>(), hi = hi_t.item<int64_t>();
  if (uint64_t(hi) - uint64_t(lo) >= uint64_t(n)) return std::nullopt;  // (unsigned: no overflow)
  const Tensor offsets = flat.to(DType::Int64) - lo;                     // in [0, hi - lo]
  const Tensor counts = kiln::_bincount(offsets, hi - lo + 1);
  const Tensor present = counts.ne(0);
  const Tensor at = kiln::nonzero(present).reshape({-1});
  const Device device = flat.device();
  const Tensor inverse = inverse_too
                             ? kiln::index_select(kiln::cumsum(present, 0, DType::Int64) - 1, 0, offsets).reshape(shape)
                             : empty_long(device);
  return Triple{(at + lo).to(flat.dtype()), inverse,
                return_counts ? kiln::index_select(counts, 0, at) : empty_long(device)};
}

}  // namespace

Triple unique_flat(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // always sorted: PyTorch leaves the order of sorted=False unspecified
  const Device device = self.device();
  const Tensor flat = self.reshape({-1});
  const int64_t n = flat.numel();
  // as PyTorch 1.13, counts bring the inverse with them
  const bool inverse_too = return_inverse || return_counts;
  if (std::optional<Triple> counted = unique_by_counting(flat, self.sizes(), inverse_too, return_counts))
    return *counted;
  const auto [values, perm] = kiln::sort(flat, 0, false);
  const Tensor differs = n < 2 ? kiln::empty({0}, TensorOptions(DType::Bool, device))
                               : kiln::ne(values.narrow(0, 1, n - 1), values.narrow(0, 0, n - 1));
  const Groups g = group_ids(differs, n, device);
  // every element of a group is equal, so which one a duplicate write keeps does not matter
  const Tensor output = kiln::scatter(kiln::empty({g.count}, values.options()), 0, g.ids, values);
  const Tensor inverse = inverse_too ? inverse_through(g, perm, device).reshape(self.sizes()) : empty_long(device);
  return {output, inverse, return_counts ? group_counts(g, device) : empty_long(device)};
}

Triple unique_dim(const Tensor& self, int64_t dim, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // unique_dim always sorts and returns inverse and counts, as PyTorch's
  KILN_CHECK(self.dim() > 0, IndexError, "unique_dim", "dim", "Dimension specified as ", dim,
             " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self.dim(), "unique_dim");
  return unique_rows(self, d, true, "unique_dim");
}

Triple unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
  if (dim) {
    KILN_CHECK(self.dim() > 0, IndexError, "unique_consecutive", "dim", "Dimension specified as ", *dim,
               " but tensor has no dimensions");
    const int64_t d = wrap_dim(*dim, self.dim(), "unique_consecutive");
    return unique_rows(self, d, false, "unique_consecutive");
  }
  const Device device = self.device();
  const Tensor flat = self.reshape({-1});
  const int64_t n = flat.numel();
  const Tensor differs = n < 2 ? kiln::empty({0}, TensorOptions(DType::Bool, device))
                               : kiln::ne(flat.narrow(0, 1, n - 1), flat.narrow(0, 0, n - 1));
  const Groups g = group_ids(differs, n, device);
  const Tensor output = kiln::scatter(kiln::empty({g.count}, flat.options()), 0, g.ids, flat);
  const Tensor inverse = return_inverse ? g.ids.reshape(self.sizes()) : empty_long(device);
  return {output, inverse, return_counts ? group_counts(g, device) : empty_long(device)};
}

Triple unique_any(const Tensor& self, bool sorted, bool return_inverse, bool return_counts,
                  std::optional<int64_t> dim) {
  return dim ? kiln::unique_dim(self, *dim, sorted, return_inverse, return_counts)
             : kiln::_unique2(self, sorted, return_inverse, return_counts);
}

}  // namespace kiln::composite
