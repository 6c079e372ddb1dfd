// copy_ and fill_: the two in-place writes every other op builds on.
#include <algorithm>
#include <cstring>
#include "core/convert.h"
#include "core/device_copy.h"
#include "kiln/cpu/parallel.h"
#include "core/scalar_fits.h"
#include "core/strided.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

// A written-to tensor may not have two elements at one address (expanded dims).
void check_no_internal_overlap(const Tensor& t, const char* op) {
  for (int64_t d = 0; d < t.dim(); ++d)
    KILN_CHECK(!(t.strides()[d] == 0 && t.sizes()[d] > 1), ValueError, op, "self",
               "unsupported operation: more than one element of the written-to tensor refers to a single memory "
               "location; clone() it first");
}

// Strides of `src` broadcast to `shape` (0 on broadcast dims); errors name copy_'s src.
DimVector broadcast_strides(const Tensor& src, IntArrayRef shape) {
  int64_t nd = int64_t(shape.size()), sd = src.dim();
  KILN_CHECK(sd <= nd, ShapeError, "copy_", "src", "source of shape ", shape_str(src.sizes()),
             " cannot be broadcast to destination shape ", shape_str(shape));
  DimVector out(shape.size(), 0);
  for (int64_t i = 0; i < sd; ++i) {
    int64_t s = src.sizes()[size_t(sd - 1 - i)], d = shape[size_t(nd - 1 - i)];
    KILN_CHECK(s == d || s == 1, ShapeError, "copy_", "src", "source of shape ", shape_str(src.sizes()),
               " cannot be broadcast to destination shape ", shape_str(shape));
    out[size_t(nd - 1 - i)] = s == 1 ? 0 : src.strides()[size_t(sd - 1 - i)];
  }
  return out;
}

// A 2-d copy where one side is dense along rows and the other along columns (x.t() into a
// contiguous tensor) goes tile by tile. Tiles are long (256) along the source's contiguous dim
// and short (8) along the destination's, and the inner loop writes the destination's short
// contiguous run: measured here at 4096^2 floats, 12 ms, against 30 ms for square 16-tiles and
// 52-56 ms for 64-tiles (few far-apart lines at a time is what TLB and DRAM reward).
template <typename D, typename S>
bool copy_transposed(const detail::StridedWalk<2>& walk, D* dst, const S* src) {
  if (walk.sizes.size() != 2) return false;
  int64_t n0 = walk.sizes[0], n1 = walk.sizes[1];
  int64_t d0 = walk.strides[0][0], d1 = walk.strides[0][1], s0 = walk.strides[1][0], s1 = walk.strides[1][1];
  bool transposed = (d0 == 1 && s1 == 1) || (s0 == 1 && d1 == 1);
  if (!transposed || n0 < 16 || n1 < 16) return false;
  const bool src_along0 = s0 == 1;  // then the destination is contiguous along dim 1
  const int64_t k0 = src_along0 ? 256 : 8, k1 = src_along0 ? 8 : 256;
  int64_t tiles1 = (n1 + k1 - 1) / k1;
  auto run = [&](int64_t tb, int64_t te) {
    for (int64_t t1 = tb; t1 < te; ++t1) {
      const int64_t o_begin = t1 * k1, o_end = std::min(n1, o_begin + k1);
      for (int64_t i_begin = 0; i_begin < n0; i_begin += k0) {
        const int64_t i_end = std::min(n0, i_begin + k0);
        if (src_along0) {
          for (int64_t i = i_begin; i < i_end; ++i)
            for (int64_t o = o_begin; o < o_end; ++o) dst[o * d1 + i * d0] = detail::convert<D>(src[o * s1 + i * s0]);
        } else {
          for (int64_t o = o_begin; o < o_end; ++o)
            for (int64_t i = i_begin; i < i_end; ++i) dst[o * d1 + i * d0] = detail::convert<D>(src[o * s1 + i * s0]);
        }
      }
    }
  };
  if (walk.numel < detail::kParallelGrain) run(0, tiles1);
  else detail::parallel_chunks(tiles1, run);
  return true;
}

template <typename D, typename S>
void copy_loop(const detail::StridedWalk<2>& walk, D* dst, const S* src) {
  if (copy_transposed(walk, dst, src)) return;
  detail::parallel_range(walk.numel, [&](int64_t b, int64_t e) {
    walk.for_each_run(b, e, [&](const int64_t* off, const int64_t* inner, int64_t count) {
      D* d = dst + off[0];
      const S* s = src + off[1];
      if (inner[0] == 1 && inner[1] == 1) {
        for (int64_t i = 0; i < count; ++i) d[i] = detail::convert<D>(s[i]);
      } else if (inner[0] == 1 && inner[1] == 0) {
        D v = detail::convert<D>(s[0]);
        for (int64_t i = 0; i < count; ++i) d[i] = v;
      } else {
        for (int64_t i = 0; i < count; ++i) d[i * inner[0]] = detail::convert<D>(s[i * inner[1]]);
      }
    });
  });
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  const char* op = "copy_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(src.defined(), ValueError, op, "src", "undefined tensor");
  if (is_same(src)) {
    bump_version();
    return *this;
  }
  DimVector src_strides = broadcast_strides(src, sizes());
  check_no_internal_overlap(*this, op);
  bump_version();
  if (numel() == 0) return *this;
  if (!is_cpu() || !src.is_cpu()) {
    cuda::detail::copy_(*this, src, non_blocking);
    return *this;
  }

  // Reading and writing one buffer through two views could read already-written values.
  if (storage() == src.storage()) {
    Tensor tmp = empty(src.sizes(), TensorOptions(src.dtype()));
    tmp.copy_(src);
    return copy_(tmp);
  }

  // Same dtype, both dense in the same order: one memcpy.
  if (dtype() == src.dtype() && is_contiguous() && src.is_contiguous() && src.numel() == numel()) {
    char* d = static_cast<char*>(data_ptr());
    const char* s = static_cast<const char*>(src.data_ptr());
    size_t es = element_size();
    detail::parallel_range(numel(), [&](int64_t b, int64_t e) {
      std::memcpy(d + b * es, s + b * es, size_t(e - b) * es);
    });
    return *this;
  }

  IntArrayRef st[2] = {strides(), src_strides};
  detail::StridedWalk<2> walk(sizes(), st);
  visit_dtype(dtype(), [&](auto dzero) {
    using D = decltype(dzero);
    visit_dtype(src.dtype(), [&](auto szero) {
      using S = decltype(szero);
      copy_loop<D, S>(walk, static_cast<D*>(data_ptr()), static_cast<const S*>(src.data_ptr()));
    });
  });
  return *this;
}

Tensor& Tensor::fill_(const Scalar& value) {
  const char* op = "fill_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(detail::scalar_fits(value, dtype()), ValueError, op, "value", "value ", value.str(),
             " cannot be converted to type ", dtype_name(dtype()), " without overflow");
  check_no_internal_overlap(*this, op);
  bump_version();
  if (numel() == 0) return *this;
  if (!is_cpu()) {
    cuda::detail::fill_(*this, value);
    return *this;
  }
  IntArrayRef st[1] = {strides()};
  detail::StridedWalk<1> walk(sizes(), st);
  visit_dtype(dtype(), [&](auto zero) {
    using T = decltype(zero);
    T v = value.to<T>();
    T* base = static_cast<T*>(data_ptr());
    detail::parallel_range(walk.numel, [&](int64_t b, int64_t e) {
      walk.for_each_run(b, e, [&](const int64_t* off, const int64_t* inner, int64_t count) {
        T* p = base + off[0];
        if (inner[0] == 1) std::fill(p, p + count, v);
        else
          for (int64_t i = 0; i < count; ++i) p[i * inner[0]] = v;
      });
    });
  });
  return *this;
}

}  // namespace kiln
