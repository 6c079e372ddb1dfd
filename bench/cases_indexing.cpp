// Indexing: row reads (index_select, gather) and the embedding gradient's adds (index_add,
// scatter_add) at the sizes issue 15 names, with identical indices on both sides; nonzero and
// masked_select of 16M elements; advanced indexing of element pairs (x[rows, cols]).
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kRows = 1 << 20, kCols = 64, kTable = 50000, kMasked = 1 << 24;

// n random indices in [0, bound) as a kiln int64 tensor and its libtorch twin.
Twin twin_indices(int64_t n, int64_t bound) {
  kiln::Tensor k = kiln::randint(bound, {n}, kiln::TensorOptions(kiln::DType::Int64));
  return {k, to_torch(k)};
}

// 16M float32 values, about half of them exactly zero.
Twin twin_half_zero() {
  kiln::Tensor k = kiln::relu(kiln::randn({kMasked}));
  return {k, to_torch(k)};
}

}  // namespace

std::vector<Case> indexing_cases() {
  const double f = 4.0, row_bytes = double(kRows) * kCols * f;
  return {
      {"index_select rows [1M,64] from [1M,64]", "indexing", 2 * row_bytes, 0, "",
       [] {
         Twin x = twin_randn({kRows, kCols}), idx = twin_indices(kRows, kRows);
         return Prepared{[x, idx] { kiln::Tensor r = x.k.index_select(0, idx.k); },
                         [x, idx] { at::Tensor r = x.t.index_select(0, idx.t); }};
       }},
      {"gather dim 0 [1M,64]", "indexing", 2 * row_bytes + double(kRows) * kCols * 8, 0, "",
       [] {
         Twin x = twin_randn({kRows, kCols}), idx = twin_indices(kRows, kRows);
         kiln::Tensor k2 = idx.k.unsqueeze(1).expand({kRows, kCols}).contiguous();
         Twin idx2{k2, to_torch(k2)};
         return Prepared{[x, idx2] { kiln::Tensor r = kiln::gather(x.k, 0, idx2.k); },
                         [x, idx2] { at::Tensor r = at::gather(x.t, 0, idx2.t); }};
       }},
      {"index_add 1M rows into [50k,64]", "indexing", row_bytes, 0, "",
       [] {
         Twin self = twin_randn({kTable, kCols}), src = twin_randn({kRows, kCols}), idx = twin_indices(kRows, kTable);
         return Prepared{[self, src, idx] { kiln::Tensor r = self.k.index_add(0, idx.k, src.k); },
                         [self, src, idx] { at::Tensor r = self.t.index_add(0, idx.t, src.t); }};
       }},
      {"scatter_add 1M rows into [50k,64]", "indexing", row_bytes + double(kRows) * kCols * 8, 0, "",
       [] {
         Twin self = twin_randn({kTable, kCols}), src = twin_randn({kRows, kCols}), idx = twin_indices(kRows, kTable);
         kiln::Tensor k2 = idx.k.unsqueeze(1).expand({kRows, kCols}).contiguous();
         Twin idx2{k2, to_torch(k2)};
         return Prepared{[self, src, idx2] { kiln::Tensor r = self.k.scatter_add(0, idx2.k, src.k); },
                         [self, src, idx2] { at::Tensor r = self.t.scatter_add(0, idx2.t, src.t); }};
       }},
      {"nonzero of 16M float32 (half zero)", "indexing", double(kMasked) * 4, 0, "",
       [] {
         Twin x = twin_half_zero();
         return Prepared{[x] { kiln::Tensor r = kiln::nonzero(x.k); }, [x] { at::Tensor r = at::nonzero(x.t); }};
       }},
      {"masked_select of 16M float32 (half set)", "indexing", double(kMasked) * 5, 0, "",
       [] {
         Twin x = twin_randn({kMasked});
         kiln::Tensor km = kiln::gt(x.k, 0.0);
         Twin m{km, to_torch(km).to(at::kBool)};
         return Prepared{[x, m] { kiln::Tensor r = kiln::masked_select(x.k, m.k); },
                         [x, m] { at::Tensor r = at::masked_select(x.t, m.t); }};
       }},
      {"index [4096,1024] with 64k (row, col) pairs", "indexing", 65536.0 * 20, 0, "",
       [] {
         Twin x = twin_randn({4096, 1024}), r = twin_indices(65536, 4096), c = twin_indices(65536, 1024);
         return Prepared{[x, r, c] {
                           kiln::Tensor y = x.k.index({r.k, c.k});
                         },
                         [x, r, c] {
                           at::Tensor y = x.t.index({r.t, c.t});
                         }};
       }},
  };
}

}  // namespace kiln_bench
