// Host tests of the element addressing the amp/foreach kernels share (kiln/common/foreach_index.h):
// the CUDA kernel's linear index -> offset and its launch size, and the dense-run test the CPU and
// CUDA kernels both use, against a direct walk of the tensor's strides.
#include <doctest/doctest.h>
#include <cstddef>
#include <set>
#include <vector>
#include "kiln/common/foreach_index.h"

using kiln::foreach_index::StridedIndex;

namespace {
// Every element's offset by an odometer over sizes (outermost first).
std::vector<int64_t> walk(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<int64_t> out, idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    out.push_back(off);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}
}  // namespace

TEST_CASE("foreach index: linear index -> offset matches the strides, size-1 dims dropped") {
  const std::vector<std::vector<int64_t>> sizes = {{3, 5}, {3, 5}, {2, 1, 4}, {4, 3, 2}, {7}};
  const std::vector<std::vector<int64_t>> strides = {{5, 1}, {1, 3}, {8, 99, 2}, {1, 8, 4}, {3}};
  for (size_t k = 0; k < sizes.size(); ++k) {
    StridedIndex ix;
    REQUIRE(kiln::foreach_index::make_index(int(sizes[k].size()), sizes[k].data(), strides[k].data(), ix));
    const std::vector<int64_t> want = walk(sizes[k], strides[k]);
    for (size_t i = 0; i < want.size(); ++i) CHECK(ix.offset(int64_t(i)) == want[i]);
  }
}

TEST_CASE("foreach index: dense runs are exactly the layouts whose elements fill their span") {
  auto dense = [](std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    StridedIndex ix;
    REQUIRE(kiln::foreach_index::make_index(int(sizes.size()), sizes.data(), strides.data(), ix));
    int64_t lowest = -1;
    const bool d = kiln::foreach_index::dense_span(ix, &lowest);
    if (d) {  // then the walk visits [0, numel) once each
      const std::vector<int64_t> offs = walk(sizes, strides);
      std::set<int64_t> seen(offs.begin(), offs.end());
      CHECK(seen.size() == offs.size());
      CHECK(*seen.begin() == lowest);
      CHECK(*seen.rbegin() == lowest + int64_t(offs.size()) - 1);
    }
    return d;
  };
  CHECK(dense({3, 5}, {5, 1}));         // contiguous
  CHECK(dense({3, 5}, {1, 3}));         // transposed contiguous
  CHECK(dense({2, 1, 4}, {4, 77, 1}));  // a size-1 dim's stride means nothing
  CHECK(dense({}, {}));                 // 0-d
  CHECK_FALSE(dense({3, 5}, {10, 2}));  // every other element
  CHECK_FALSE(dense({3, 5}, {0, 1}));   // expanded
  CHECK_FALSE(dense({3, 5}, {6, 1}));   // rows with gaps
}

TEST_CASE("foreach index: grid blocks cover n, capped, never 0") {
  CHECK(kiln::foreach_index::grid_blocks(0, 256, 1000) == 1);
  CHECK(kiln::foreach_index::grid_blocks(1, 256, 1000) == 1);
  CHECK(kiln::foreach_index::grid_blocks(256, 256, 1000) == 1);
  CHECK(kiln::foreach_index::grid_blocks(257, 256, 1000) == 2);
  CHECK(kiln::foreach_index::grid_blocks(int64_t(1) << 40, 256, 1000) == 1000);
}
