// Indexing: row reads (index_select, gather) and the embedding gradient's adds (index_add,
// scatter_add) at the sizes issue 15 names, with identical indices on both sides.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kRows = 1 << 20, kCols = 64, kTable = 50000;

// n random indices in [0, bound) as a kiln int64 tensor and its libtorch twin.
Twin twin_indices(int64_t n, int64_t bound) {
  kiln::Tensor k = kiln::randint(bound, {n}, kiln::TensorOptions(kiln::DType::Int64));
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
  };
}

}  // namespace kiln_bench
