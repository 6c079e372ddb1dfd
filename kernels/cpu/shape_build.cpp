// flip, tril/triu and tril_indices/triu_indices on CPU. flip and the triangles move bytes, so
// one kernel per element size serves every dtype; the meta steps (kiln/meta/shape_build.h)
// have checked the arguments.
#include <algorithm>
#include <cstring>
#include <utility>
#include "kiln/common/tri_indices.h"
#include "kiln/cpu/parallel.h"
#include "kiln/gen/kernels/cpu/flip.h"
#include "kiln/gen/kernels/cpu/tril.h"
#include "kiln/gen/kernels/cpu/tril_indices.h"
#include "kiln/gen/kernels/cpu/triu.h"
#include "kiln/gen/kernels/cpu/triu_indices.h"

namespace kiln::cpu {
namespace {

template <size_t N>
struct Bytes {
  unsigned char b[N];
};

// out[i] for i in [begin, end) of a flip over plan.shape; a run along the last dim is one
// memcpy, or a reversed loop when that dim flips.
template <size_t N>
void flip_range(const meta::FlipPlan& plan, char* out, const char* in, int64_t begin, int64_t end) {
  using E = Bytes<N>;
  const int64_t k = int64_t(plan.shape.size()), last = plan.shape[size_t(k - 1)];
  const bool last_flips = plan.flipped[size_t(k - 1)];
  for (int64_t i = begin; i < end;) {
    int64_t row = i / last, j = i % last, src_row = 0, stride = last;
    for (int64_t d = k - 2; d >= 0; --d) {
      const int64_t s = plan.shape[size_t(d)], c = row % s;
      row /= s;
      src_row += (plan.flipped[size_t(d)] ? s - 1 - c : c) * stride;
      stride *= s;
    }
    const int64_t len = std::min(end - i, last - j);
    E* dst = reinterpret_cast<E*>(out) + i;
    const E* src = reinterpret_cast<const E*>(in) + src_row;
    if (!last_flips) {
      std::memcpy(dst, src + j, size_t(len) * N);
    } else {
      const E* from = src + (last - 1 - j);
      for (int64_t t = 0; t < len; ++t) dst[t] = from[-t];
    }
    i += len;
  }
}

template <size_t N>
void flip_bytes(const meta::FlipPlan& plan, const TensorBase& out, const TensorBase& self) {
  char* o = static_cast<char*>(out.data_ptr());
  const char* s = static_cast<const char*>(self.data_ptr());
  ::kiln::detail::parallel_range(out.numel(),
                                 [&](int64_t begin, int64_t end) { flip_range<N>(plan, o, s, begin, end); });
}

// Each matrix row keeps [keep_begin, keep_end) of its columns and zeroes the rest (all-zero
// bits are 0 in every dtype); out may be self itself (tril_, triu_).
template <typename KeepRange>
void triangle(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, const KeepRange& keep) {
  const int64_t rows = plan.rows, cols = plan.cols, es = int64_t(out.element_size());
  char* o = static_cast<char*>(out.data_ptr());
  const char* s = static_cast<const char*>(self.data_ptr());
  ::kiln::detail::parallel_items(plan.batch * rows, cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto [kb, ke] = keep(r % rows);
      char* dst = o + r * cols * es;
      const char* src = s + r * cols * es;
      std::memset(dst, 0, size_t(kb * es));
      if (dst != src && ke > kb) std::memcpy(dst + kb * es, src + kb * es, size_t((ke - kb) * es));
      std::memset(dst + ke * es, 0, size_t((cols - ke) * es));
    }
  });
}

template <typename T>
void fill_tri_indices(const meta::TriIndicesPlan& plan, const TensorBase& out, bool lower) {
  const int64_t count = plan.sizes[1];
  T* rows = static_cast<T*>(out.data_ptr());
  T* cols = rows + count;
  int64_t k = 0;
  // tril's rows above -(offset + 1) keep nothing; stop once every entry is written (the rows
  // after that keep nothing either), so a huge row count with an empty result costs nothing.
  const int64_t first = lower && plan.offset < 0 ? std::min(plan.row, -(plan.offset + 1)) : 0;
  for (int64_t i = first; i < plan.row && k < count; ++i) {
    const int64_t b = lower ? 0 : tri::clamp(i + plan.offset, 0, plan.col);
    const int64_t e = lower ? tri::tril_row_count(i, plan.col, plan.offset) : plan.col;
    for (int64_t j = b; j < e; ++j, ++k) {
      rows[k] = T(i);
      cols[k] = T(j);
    }
  }
}

void tri_indices(const meta::TriIndicesPlan& plan, const TensorBase& out, bool lower) {
  if (plan.dtype == DType::Int32) fill_tri_indices<int32_t>(plan, out, lower);
  else fill_tri_indices<int64_t>(plan, out, lower);
}

}  // namespace

void flip(const meta::FlipPlan& plan, const TensorBase& out, const TensorBase& self, IntArrayRef /*dims*/) {
  if (out.numel() == 0) return;
  if (plan.shape.empty()) {  // nothing moves: every dim has size 1
    std::memcpy(out.data_ptr(), self.data_ptr(), out.nbytes());
    return;
  }
  switch (out.element_size()) {
    case 1:
      return flip_bytes<1>(plan, out, self);
    case 2:
      return flip_bytes<2>(plan, out, self);
    case 4:
      return flip_bytes<4>(plan, out, self);
    case 8:
      return flip_bytes<8>(plan, out, self);
    default:
      return flip_bytes<16>(plan, out, self);
  }
}

void tril(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal) {
  if (out.numel() == 0) return;
  const int64_t cols = plan.cols;
  triangle(plan, out, self, [&](int64_t i) {
    return std::pair<int64_t, int64_t>{0, tri::clamp(i + diagonal + 1, 0, cols)};
  });
}

void triu(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal) {
  if (out.numel() == 0) return;
  const int64_t cols = plan.cols;
  triangle(plan, out, self, [&](int64_t i) {
    return std::pair<int64_t, int64_t>{tri::clamp(i + diagonal, 0, cols), cols};
  });
}

void tril_indices(const meta::TriIndicesPlan& plan, const TensorBase& out) { tri_indices(plan, out, true); }

void triu_indices(const meta::TriIndicesPlan& plan, const TensorBase& out) { tri_indices(plan, out, false); }

}  // namespace kiln::cpu
