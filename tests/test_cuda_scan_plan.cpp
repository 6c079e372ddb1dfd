// The split-row scan of kernels/cuda/scan.cu, replayed on the host: rows cut by
// cuda_plan::row_split into chunks, chunk totals, each row's carries (exclusive sums of the
// totals), then every chunk scanned from its carry. Integer sums are exact, so the replay
// must equal the CPU's cumsum and _cumsum_reverse element for element.
#include <doctest/doctest.h>

#include <vector>
#include "kernels/cuda/plan/reduce_plan.h"
#include "kiln/core.h"
#include "kiln/gen/api/_cumsum_reverse.h"
#include "kiln/gen/api/cumsum.h"

using namespace kiln;
using cuda_plan::RowSplit;

namespace {

int64_t scan_index(bool reverse, int64_t k, int64_t D) { return reverse ? D - 1 - k : k; }

// rows x D, row-major; returns the scan of every row as the three passes compute it.
std::vector<int64_t> replay_split_scan(const std::vector<int64_t>& x, int64_t rows, int64_t D, const RowSplit& sp,
                                       bool reverse) {
  std::vector<int64_t> totals(size_t(rows * sp.splits), 0), y(x.size(), 0);
  for (int64_t r = 0; r < rows; ++r)  // pass 1
    for (int64_t c = 0; c < sp.splits; ++c)
      for (int64_t k = 0; k < cuda_plan::chunk_length(sp.chunk, D, c); ++k)
        totals[size_t(r * sp.splits + c)] += x[size_t(r * D + scan_index(reverse, c * sp.chunk + k, D))];
  for (int64_t r = 0; r < rows; ++r) {  // pass 2
    int64_t carry = 0;
    for (int64_t c = 0; c < sp.splits; ++c) {
      const int64_t next = carry + totals[size_t(r * sp.splits + c)];
      totals[size_t(r * sp.splits + c)] = carry;
      carry = next;
    }
  }
  for (int64_t r = 0; r < rows; ++r)  // pass 3
    for (int64_t c = 0; c < sp.splits; ++c) {
      int64_t carry = totals[size_t(r * sp.splits + c)];
      for (int64_t k = 0; k < cuda_plan::chunk_length(sp.chunk, D, c); ++k) {
        const size_t i = size_t(r * D + scan_index(reverse, c * sp.chunk + k, D));
        carry += x[i];
        y[i] = carry;
      }
    }
  return y;
}

}  // namespace

TEST_CASE("split-row scan: chunk totals, carries and chunk scans equal the CPU's cumsum, both ways") {
  struct Case { int64_t rows, D; int sms; };
  for (const Case& cs : {Case{1, 100003, 132}, Case{3, 50000, 108}, Case{7, 20000, 132}, Case{1, 8192, 1}}) {
    const RowSplit sp = cuda_plan::row_split(cs.rows, cs.D, cs.sms);
    INFO("rows " << cs.rows << " D " << cs.D << " SMs " << cs.sms << ": " << sp.splits << " chunks of " << sp.chunk);
    CHECK(sp.splits > 1);  // these shapes are the ones the split path exists for
    std::vector<int64_t> x(size_t(cs.rows * cs.D));
    for (size_t i = 0; i < x.size(); ++i) x[i] = int64_t((i * 2654435761u) % 2001) - 1000;
    Tensor t = from_vector<int64_t>(x, {cs.rows, cs.D});
    for (bool reverse : {false, true}) {
      std::vector<int64_t> want = (reverse ? _cumsum_reverse(t, 1) : cumsum(t, 1)).to_vector<int64_t>();
      CHECK(replay_split_scan(x, cs.rows, cs.D, sp, reverse) == want);
    }
  }
}
