// nonzero, masked_select and masked_scatter on CPU. Each runs two passes over fixed-size blocks
// (independent of the thread count, so results never depend on it): count the true places of
// every block, then write each block's share at its prefix offset.
#include <algorithm>
#include <vector>
#include "index_support.h"
#include "kernel_utils.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/masked_scatter.h"
#include "kiln/gen/kernels/cpu/masked_select_sized.h"
#include "kiln/gen/kernels/cpu/nonzero_sized.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kBlock = 1 << 16;

// offsets[b]: how many places blocks before b hold (offsets.back(): all of them);
// count(begin, end) counts one block.
template <typename Count>
std::vector<int64_t> block_offsets(int64_t n, const Count& count) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<int64_t> offsets(size_t(blocks + 1), 0);
  kiln::detail::parallel_items(blocks, kBlock, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) offsets[size_t(b + 1)] = count(b * kBlock, std::min(n, (b + 1) * kBlock));
  });
  for (size_t b = 1; b < offsets.size(); ++b) offsets[b] += offsets[b - 1];
  return offsets;
}

// fill(begin, end, offset) for every block, in parallel.
template <typename Fill>
void fill_blocks(int64_t n, const std::vector<int64_t>& offsets, const Fill& fill) {
  const int64_t blocks = int64_t(offsets.size()) - 1;
  kiln::detail::parallel_items(blocks, kBlock, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fill(b * kBlock, std::min(n, (b + 1) * kBlock), offsets[size_t(b)]);
  });
}

int64_t count_mask(const uint8_t* m, int64_t b, int64_t e) {
  int64_t c = 0;
  for (int64_t i = b; i < e; ++i) c += m[i] != 0;
  return c;
}

// The coordinates of the true places of x[b, e) (x contiguous of `sizes`), a row each.
template <typename T>
void nonzero_rows(const T* x, int64_t b, int64_t e, IntArrayRef sizes, int64_t* out) {
  const int64_t nd = int64_t(sizes.size());
  DimVector c(size_t(nd), 0);
  for (int64_t d = nd - 1, rest = b; d >= 0; --d) {
    c[size_t(d)] = rest % sizes[size_t(d)];
    rest /= sizes[size_t(d)];
  }
  const int64_t last = sizes[size_t(nd - 1)];
  // rows are staged kStage at a time and written whether or not the element is nonzero, the
  // cursor advancing only past nonzero ones: no branch to mispredict on random data
  constexpr int64_t kStage = 256;
  std::vector<int64_t> stage(size_t(kStage * nd));
  for (int64_t i = b; i < e;) {
    const int64_t run = std::min(e - i, last - c[size_t(nd - 1)]);
    for (int64_t j0 = 0; j0 < run; j0 += kStage) {
      const int64_t m = std::min(kStage, run - j0);
      int64_t* row = stage.data();
      for (int64_t j = j0; j < j0 + m; ++j) {
        for (int64_t d = 0; d + 1 < nd; ++d) row[d] = c[size_t(d)];
        row[nd - 1] = c[size_t(nd - 1)] + j;
        row += nd * int64_t(truthy(x[i + j]));  // a multiply, not a branch
      }
      const int64_t written = row - stage.data();
      std::copy(stage.data(), row, out);
      out += written;
    }
    i += run;
    c[size_t(nd - 1)] += run;
    for (int64_t d = nd - 1; d > 0 && c[size_t(d)] == sizes[size_t(d)]; --d) {
      c[size_t(d)] = 0;
      ++c[size_t(d - 1)];
    }
  }
}

void check_found(const char* op, int64_t found, int64_t count) {
  KILN_CHECK(found == count, ValueError, op, "count", "expected ", count, " true places, found ", found);
}

}  // namespace

void nonzero_sized(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self, int64_t count) {
  const int64_t n = self.numel();
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(self.data_ptr());
    const auto offsets = block_offsets(n, [&](int64_t b, int64_t e) {
      int64_t c = 0;
      for (int64_t i = b; i < e; ++i) c += truthy(x[i]);
      return c;
    });
    check_found("_nonzero_sized", offsets.back(), count);
    if (self.dim() == 0) return;  // [count, 0]: no coordinates to write
    int64_t* rows = static_cast<int64_t*>(out.data_ptr());
    fill_blocks(n, offsets,
                [&](int64_t b, int64_t e, int64_t at) { nonzero_rows(x, b, e, self.sizes(), rows + at * self.dim()); });
  });
  (void)plan;
}

void masked_select_sized(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self,
                         const TensorBase& mask, int64_t count) {
  const int64_t n = self.numel();
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const auto offsets = block_offsets(n, [&](int64_t b, int64_t e) { return count_mask(m, b, e); });
  check_found("_masked_select_sized", offsets.back(), count);
  visit_element_size(self.element_size(), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    E* o = static_cast<E*>(out.data_ptr());
    fill_blocks(n, offsets, [&](int64_t b, int64_t e, int64_t at) {
      // staged and branch-free, as nonzero's rows
      constexpr int64_t kStage = 256;
      E stage[kStage];
      for (int64_t i0 = b; i0 < e; i0 += kStage) {
        const int64_t len = std::min(kStage, e - i0);
        int64_t k = 0;
        for (int64_t i = i0; i < i0 + len; ++i) {
          stage[k] = x[i];
          k += m[i] != 0;
        }
        std::copy(stage, stage + k, o + at);
        at += k;
      }
    });
  });
  (void)plan;
}

void masked_scatter(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& mask,
                    const TensorBase& source) {
  const int64_t n = out.numel(), available = source.numel();
  const uint8_t* m = static_cast<const uint8_t*>(mask.data_ptr());
  const auto too_few = [&](int64_t needed) {
    KILN_CHECK(needed <= available, ShapeError, "masked_scatter", "source", "expected source to hold at least ", needed,
               " elements (the true places of mask), got ", available);
  };
  visit_element_size(self.element_size(), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    const E* src = static_cast<const E*>(source.data_ptr());
    E* o = static_cast<E*>(out.data_ptr());
    if (plan.dense) {  // self, mask and out share one shape: blocks in parallel (out may be self)
      const auto offsets = block_offsets(n, [&](int64_t b, int64_t e) { return count_mask(m, b, e); });
      too_few(offsets.back());  // before anything is written
      fill_blocks(n, offsets, [&](int64_t b, int64_t e, int64_t at) {
        for (int64_t i = b; i < e; ++i) o[i] = m[i] ? src[at++] : x[i];
      });
      return;
    }
    // broadcast: one walk over out's places with self's and mask's strides (in place, self has
    // out's shape, so each place reads only itself)
    const IntArrayRef sizes = plan.sizes;
    const int64_t nd = int64_t(sizes.size());
    const auto walk = [&](const auto& visit) {
      DimVector c(size_t(nd), 0);
      int64_t xs = 0, ms = 0;
      for (int64_t i = 0; i < n; ++i) {
        visit(i, xs, ms);
        for (int64_t d = nd - 1; d >= 0; --d) {
          xs += plan.self_strides[size_t(d)];
          ms += plan.mask_strides[size_t(d)];
          if (++c[size_t(d)] < sizes[size_t(d)]) break;
          xs -= plan.self_strides[size_t(d)] * sizes[size_t(d)];
          ms -= plan.mask_strides[size_t(d)] * sizes[size_t(d)];
          c[size_t(d)] = 0;
        }
      }
    };
    int64_t needed = 0;
    walk([&](int64_t, int64_t, int64_t mo) { needed += m[mo] != 0; });
    too_few(needed);
    int64_t k = 0;
    walk([&](int64_t i, int64_t xo, int64_t mo) { o[i] = m[mo] ? src[k++] : x[xo]; });
  });
}

}  // namespace kiln::cpu
