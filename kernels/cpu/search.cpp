// searchsorted and bucketize on CPU (plan in kiln/meta/searching.h). Both inputs are compared
// in the plan's promoted dtype. Values are searched eight at a time in lockstep: the probes of
// eight independent binary searches overlap their cache misses, which a search one value at a
// time cannot (the sequence is usually larger than L1). Every value's probes are PyTorch's
// (kiln/common/search_rules.h), so the result is PyTorch's, NaN included. Threads split the values.
// A row with at least as many values as places, found sorted and free of NaN, has one answer
// whatever the probes: it takes a search whose steps are the same for every value (vectorized
// across values, gathers instead of dependent branches; histogram's 100 bins 11.5 -> 3.3 ns a value).
#include <cstdint>
#include <vector>
#include "kernel_utils.h"
#include "kiln/common/search_rules.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/bucketize.h"
#include "kiln/gen/kernels/cpu/searchsorted.h"

namespace kiln::cpu {
namespace {

constexpr int kLanes = 8;

// Probes a search of n places needs at most: each one at least halves the interval.
int probes_for(int64_t n) { return n > 0 ? 64 - __builtin_clzll(uint64_t(n)) : 0; }

TensorBase as_dtype(const TensorBase& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  TensorBase c = kiln::detail::empty_dense(t.sizes(), dtype, t.device());
  c.copy_(t);
  return c;
}

// Values [b, e) of one row, written as R (int32 or int64). The lanes' updates are bit masks, not
// branches: which way a search goes is data, and a mispredicted branch per probe cost more than the
// probe itself on a sequence that fits in L1. `kSorter`/`kRight` are template arguments, so the
// inner loop tests neither.
template <bool kSorter, bool kRight, typename T, typename R>
void search_lanes(const T* row, const int64_t* sorter, int64_t n, const T* vals, R* out, int64_t b, int64_t e) {
  using M = opmath_t<T>;
  const int steps = probes_for(n);
  int64_t i = b;
  for (; i + kLanes <= e; i += kLanes) {
    int64_t start[kLanes], end[kLanes];
    M v[kLanes];
    for (int l = 0; l < kLanes; ++l) start[l] = 0, end[l] = n, v[l] = M(vals[i + l]);
    for (int s = 0; s < steps; ++s) {
#pragma GCC unroll 8
      for (int l = 0; l < kLanes; ++l) {
        const int64_t len = end[l] - start[l];
        const int64_t mid = start[l] + (len >> 1);
        const int64_t live = -int64_t(len > 0);  // all ones while the lane searches
        const int64_t at = mid & live;           // a finished lane reads a harmless place
        const M m = M(kSorter ? row[sorter[at]] : row[at]);
        const int64_t go_right = -int64_t(kRight ? !(m > v[l]) : !(m >= v[l])) & live;
        const int64_t go_left = ~go_right & live;
        start[l] = (start[l] & ~go_right) | ((mid + 1) & go_right);
        end[l] = (end[l] & ~go_left) | (mid & go_left);
      }
    }
    for (int l = 0; l < kLanes; ++l) out[i + l] = R(start[l]);
  }
  for (; i < e; ++i) out[i] = R(search::bound<M>(row, sorter, n, M(vals[i]), kRight));
}

// Whether row[0, n) is sorted and holds no NaN (a comparison with NaN is false).
template <typename T>
bool sorted_without_nan(const T* row, int64_t n) {
  using M = opmath_t<T>;
  for (int64_t j = 0; j < n; ++j)
    if (!(M(row[j]) == M(row[j])) || (j > 0 && !(M(row[j - 1]) <= M(row[j])))) return false;
  return true;
}

// Values [b, e) of a sorted row without NaN (1 <= n < 2^31): the count of places < v (left) or
// <= v (right), which every probe order finds there; a NaN value goes right at each of PyTorch's
// probes (n). The search halves the same lengths for every value (halves[s]), so a block of
// kBlock values steps together: a gather per step for 16 of them (int32 places), four such
// gathers independent of each other (one block of 16 waits on its gathers' latency: 5.6 ns a
// value over 101 places, 3.3 ns with 64).
template <bool kRight, typename T, typename R>
void search_sorted_row(const T* row, int64_t n, const T* vals, R* out, int64_t b, int64_t e) {
  using M = opmath_t<T>;
  constexpr int kBlock = 64;
  int32_t halves[32];
  int steps = 0;
  for (int64_t len = n; len > 1; len -= len >> 1) halves[steps++] = int32_t(len >> 1);
  auto below = [](M m, M v) { return kRight ? m <= v : m < v; };
  int64_t i = b;
  for (; i + kBlock <= e; i += kBlock) {
    M v[kBlock];
    int32_t base[kBlock];  // each value's answer lies in [base, base + the length left]
    for (int k = 0; k < kBlock; ++k) v[k] = M(vals[i + k]), base[k] = 0;
    for (int s = 0; s < steps; ++s) {
      const int32_t h = halves[s];
#pragma omp simd
      for (int k = 0; k < kBlock; ++k) base[k] += below(M(row[base[k] + h]), v[k]) ? h : 0;
    }
    for (int k = 0; k < kBlock; ++k) out[i + k] = R(v[k] == v[k] ? base[k] + int64_t(below(M(row[base[k]]), v[k])) : n);
  }
  for (; i < e; ++i) {
    const M v = M(vals[i]);
    int32_t base = 0;
    for (int s = 0; s < steps; ++s) base += below(M(row[base + halves[s]]), v) ? halves[s] : 0;
    out[i] = R(v == v ? base + int64_t(below(M(row[base]), v)) : n);
  }
}

template <typename T, typename R>
void search_values(const T* row, const int64_t* sorter, int64_t n, const T* vals, R* out, int64_t b, int64_t e,
                   bool right, bool sorted_row) {
  if (sorted_row) {
    if (right) search_sorted_row<true>(row, n, vals, out, b, e);
    else search_sorted_row<false>(row, n, vals, out, b, e);
  } else if (sorter) {
    if (right) search_lanes<true, true>(row, sorter, n, vals, out, b, e);
    else search_lanes<true, false>(row, sorter, n, vals, out, b, e);
  } else {
    if (right) search_lanes<false, true>(row, sorter, n, vals, out, b, e);
    else search_lanes<false, false>(row, sorter, n, vals, out, b, e);
  }
}

// Every sorter index must name a place of its row (PyTorch reads out of bounds instead).
void check_sorter(const meta::SearchPlan& plan, const int64_t* sorter) {
  const int64_t total = plan.rows * plan.row_len;
  for (int64_t k = 0; k < total; ++k)
    KILN_CHECK(sorter[k] >= 0 && sorter[k] < plan.row_len, IndexError, "searchsorted", "sorter", "sorter index ",
               sorter[k], " is out of range for boundaries of size ", plan.row_len);
}

void search(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& seq, const TensorBase& values,
            const TensorBase& sorter) {
  const int64_t* sort = sorter.defined() ? static_cast<const int64_t*>(sorter.data_ptr()) : nullptr;
  if (sort) check_sorter(plan, sort);
  const int64_t total = plan.rows * plan.per_row;
  if (total == 0) return;
  const TensorBase s = as_dtype(seq, plan.compare_dtype), v = as_dtype(values, plan.compare_dtype);
  visit_dtype(plan.compare_dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || is_complex_v<T>) {
      KILN_FAIL(DTypeError, "searchsorted", "self", "not implemented for ", dtype_name(plan.compare_dtype));
    } else {
      const T* bd = static_cast<const T*>(s.data_ptr());
      const T* x = static_cast<const T*>(v.data_ptr());
      const int64_t n = plan.row_len, per_row = plan.per_row;
      const int64_t work = probes_for(n) + 1;
      // Checking a row costs less than one probe per value when it has as many values as places.
      std::vector<uint8_t> sorted_rows(size_t(plan.rows), 0);
      if (!sort && n > 0 && n <= int64_t(INT32_MAX) && per_row >= n)
        for (int64_t r = 0; r < plan.rows; ++r) sorted_rows[size_t(r)] = sorted_without_nan(bd + r * n, n);
      auto run = [&](auto* res) {
        kiln::detail::parallel_items(total, work, [&](int64_t b, int64_t e) {
          while (b < e) {  // the part of [b, e) in one row
            const int64_t r = b / per_row, row_end = std::min(e, (r + 1) * per_row);
            search_values(bd + r * n, sort ? sort + r * n : nullptr, n, x, res, b, row_end, plan.right,
                          sorted_rows[size_t(r)] != 0);
            b = row_end;
          }
        });
      };
      if (plan.dtype == DType::Int32) run(static_cast<int32_t*>(out.data_ptr()));
      else run(static_cast<int64_t*>(out.data_ptr()));
    }
  });
}

}  // namespace

void searchsorted(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& sorted_sequence,
                  const TensorBase& self, const TensorBase& sorter, bool /*out_int32*/, bool /*right*/,
                  std::optional<std::string_view> /*side*/) {
  search(plan, out, sorted_sequence, self, sorter);
}

void bucketize(const meta::SearchPlan& plan, const TensorBase& out, const TensorBase& self,
               const TensorBase& boundaries, bool /*out_int32*/, bool /*right*/) {
  search(plan, out, boundaries, self, TensorBase());
}

}  // namespace kiln::cpu
