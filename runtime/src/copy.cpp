// copy_ and fill_: the two in-place writes every other op builds on.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include "core/convert.h"
#include "core/strided.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

template <typename T> struct complex_value { using type = T; };
template <typename T> struct complex_value<complex<T>> { using type = T; };

constexpr int64_t kParallelGrain = 32768;  // elements per thread worth an OpenMP fork

// fn(begin, end) over [0, n), split across threads when n is large.
template <typename Fn>
void parallel_range(int64_t n, const Fn& fn) {
  if (n < kParallelGrain || omp_in_parallel()) {
    fn(int64_t(0), n);
    return;
  }
#pragma omp parallel
  {
    int nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    if (b < e) fn(b, e);
  }
}

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

// c10's checked_convert: does `v` fit `dtype`? Infinities fit floating types; unsigned types
// accept negative integers down to -max (they wrap, so `a - b` works on uint8); a complex
// value with an imaginary part does not fit a real type.
bool scalar_overflows(const Scalar& v, DType dtype) {
  if (dtype == DType::Bool || v.is_bool()) return false;
  auto out_of_range = [&](double lowest, double max, bool has_inf) {
    double re = v.to<double>();
    if (v.is_integral()) {
      int64_t i = v.to<int64_t>();
      if (lowest == 0 && i < 0) return double(-i) > max;  // unsigned wrap-around
      return double(i) < lowest || double(i) > max;
    }
    if (std::isinf(re) && has_inf) return false;
    if (std::isnan(re)) return !has_inf;  // NaN fits floating types only
    return re < lowest || re > max;
  };
  if (v.is_complex() && !kiln::is_complex(dtype) && v.to<complex<double>>().im != 0) return true;
  return visit_dtype(dtype, [&](auto zero) -> bool {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else {
      using V = std::conditional_t<is_complex_v<T>, typename complex_value<T>::type, T>;
      if constexpr (std::is_same_v<V, Half>) return out_of_range(-65504.0, 65504.0, true);
      else if constexpr (std::is_same_v<V, BFloat16>) return out_of_range(-3.3895313892515355e38, 3.3895313892515355e38, true);
      else {
        bool bad = out_of_range(double(std::numeric_limits<V>::lowest()), double(std::numeric_limits<V>::max()),
                                std::numeric_limits<V>::has_infinity);
        if constexpr (is_complex_v<T>) {
          if (v.is_complex()) {
            double im = v.to<complex<double>>().im;
            bad = bad || (std::isfinite(im) && (im < double(std::numeric_limits<V>::lowest()) ||
                                                im > double(std::numeric_limits<V>::max())));
          }
        }
        return bad;
      }
    }
  });
}

// A 2-d copy where one side is dense along rows and the other along columns (x.t() into a
// contiguous tensor): going through 32x32 tiles keeps both sides in cache, instead of one
// cache miss per element on the strided side.
template <typename D, typename S>
bool copy_transposed(const detail::StridedWalk<2>& walk, D* dst, const S* src) {
  if (walk.sizes.size() != 2) return false;
  int64_t n0 = walk.sizes[0], n1 = walk.sizes[1];
  int64_t d0 = walk.strides[0][0], d1 = walk.strides[0][1], s0 = walk.strides[1][0], s1 = walk.strides[1][1];
  bool transposed = (d0 == 1 && s1 == 1) || (s0 == 1 && d1 == 1);
  if (!transposed || n0 < 16 || n1 < 16) return false;
  constexpr int64_t kTile = 32;
  int64_t tiles1 = (n1 + kTile - 1) / kTile;
  auto run = [&](int64_t tb, int64_t te) {
    for (int64_t t1 = tb; t1 < te; ++t1) {
      int64_t o_end = std::min(n1, (t1 + 1) * kTile);
      for (int64_t i_begin = 0; i_begin < n0; i_begin += kTile) {
        int64_t i_end = std::min(n0, i_begin + kTile);
        for (int64_t o = t1 * kTile; o < o_end; ++o)
          for (int64_t i = i_begin; i < i_end; ++i) dst[o * d1 + i * d0] = detail::convert<D>(src[o * s1 + i * s0]);
      }
    }
  };
  if (walk.numel < kParallelGrain || omp_in_parallel()) {
    run(0, tiles1);
  } else {
#pragma omp parallel
    {
      int nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (tiles1 + nt - 1) / nt;
      int64_t b = std::min(tiles1, t * chunk), e = std::min(tiles1, b + chunk);
      if (b < e) run(b, e);
    }
  }
  return true;
}

template <typename D, typename S>
void copy_loop(const detail::StridedWalk<2>& walk, D* dst, const S* src) {
  if (copy_transposed(walk, dst, src)) return;
  parallel_range(walk.numel, [&](int64_t b, int64_t e) {
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
  KILN_CHECK(is_cpu(), DeviceError, op, "self", "copy_ runs on CPU tensors only, got one on ", device().str());
  KILN_CHECK(src.is_cpu(), DeviceError, op, "src", "copy_ runs on CPU tensors only, got one on ",
             src.device().str());
  if (is_same(src)) {
    bump_version();
    return *this;
  }
  DimVector src_strides = broadcast_strides(src, sizes());
  check_no_internal_overlap(*this, op);
  bump_version();
  if (numel() == 0) return *this;

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
    parallel_range(numel(), [&](int64_t b, int64_t e) {
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
  KILN_CHECK(is_cpu(), DeviceError, op, "self", "fill_ runs on CPU tensors only, got one on ", device().str());
  KILN_CHECK(!scalar_overflows(value, dtype()), ValueError, op, "value", "value ", value.str(),
             " cannot be converted to type ", dtype_name(dtype()), " without overflow");
  check_no_internal_overlap(*this, op);
  bump_version();
  if (numel() == 0) return *this;
  IntArrayRef st[1] = {strides()};
  detail::StridedWalk<1> walk(sizes(), st);
  visit_dtype(dtype(), [&](auto zero) {
    using T = decltype(zero);
    T v = value.to<T>();
    T* base = static_cast<T*>(data_ptr());
    parallel_range(walk.numel, [&](int64_t b, int64_t e) {
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
