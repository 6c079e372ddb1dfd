// copy_ and fill_: the two in-place writes every other op builds on.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include "kiln/common/convert.h"
#include "kiln/device_hooks.h"
#include "kiln/cpu/loops.h"
#include "kiln/cpu/parallel.h"
#include "kiln/destination.h"
#include "kiln/strided_geometry.h"
#include "core/scalar_fits.h"
#include "kiln/tensor_base.h"

namespace kiln {
namespace {

// Strides of `src` broadcast to `shape` (0 on broadcast dims); errors name copy_'s src.
DimVector broadcast_strides(const TensorBase& src, IntArrayRef shape) {
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

// dst = convert(src) over the iteration layer: a transposed source goes tile by tile, a
// broadcast one stores each value once per run, a dense one vectorizes.
template <typename D, typename S>
void copy_loop(const StridedGeometry& g) {
  cpu::conversion_loop<D, S>(g, [](S v) { return detail::convert<D>(v); });
}

// A loop per dtype pair would be 12 x 12 instantiations of the conversion loop (this file
// alone was a minute of compile time). Same-dtype copies move bits by element size (5 loops),
// a loop exists for each pair with one side a pivot dtype (76), and the other 56 pairs (int32 ->
// float16, uint8 -> int8, complex64 -> bfloat16 ...) convert through one pivot in two passes,
// which is exact: their source converts to the pivot without rounding, so the one rounding left
// is the pivot's conversion to the destination, the same as the direct cast's.
constexpr bool is_pivot(DType t) {
  return t == DType::Int64 || t == DType::Float32 || t == DType::Float64 || t == DType::Complex128;
}
DType pivot_for(DType a, DType b) {
  if (is_complex(a) || is_complex(b)) return DType::Complex128;
  if (is_floating(a) || is_floating(b)) return DType::Float64;
  return DType::Int64;
}
// N bytes moved as one value, aligned as the dtypes of that size are (kiln::complex<double>: 16).
template <size_t N>
struct Bits {
  alignas(N) unsigned char b[N];
};
template <typename T>
using BitsOf =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t,
                                                             std::conditional_t<sizeof(T) == 8, uint64_t, Bits<16>>>>>;

void copy_strided(const StridedGeometry& g, DType dst, DType src) {
  visit_dtype(dst, [&](auto dzero) {
    using D = decltype(dzero);
    visit_dtype(src, [&](auto szero) {
      using S = decltype(szero);
      if constexpr (std::is_same_v<D, S>) {
        copy_loop<BitsOf<D>, BitsOf<D>>(g);
      } else if constexpr (is_pivot(dtype_of<D>) || is_pivot(dtype_of<S>)) {
        copy_loop<D, S>(g);
      } else {
        KILN_FAIL(InternalError, "copy_", "src", "no loop from ", dtype_name(dtype_of<S>), " to ",
                  dtype_name(dtype_of<D>), " (copy_ goes through a pivot dtype)");
      }
    });
  });
}

}  // namespace

const TensorBase& TensorBase::copy_(const TensorBase& src, bool non_blocking) const {
  const char* op = "copy_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(src.defined(), ValueError, op, "src", "undefined tensor");
  if (is_same(src)) {
    bump_version();
    return *this;
  }
  DimVector src_strides = broadcast_strides(src, sizes());
  support::check_no_internal_overlap(op, "self", *this);
  bump_version();
  if (numel() == 0) return *this;
  if (!is_cpu() && !src.is_cpu() && device().type != src.device().type) {
    // Between two backends (cuda and an out-of-tree one): each hook knows only its device and the CPU.
    TensorBase host = detail::empty_dense(src.sizes(), src.dtype());
    host.copy_(src, non_blocking);
    return copy_(host, non_blocking);
  }
  if (!is_cpu() || !src.is_cpu()) {  // the device's backend moves the bytes, either way
    device_hooks(is_cpu() ? src.device().type : device().type, op).copy(*this, src, non_blocking);
    return *this;
  }

  // Reading and writing one buffer through two views could read already-written values.
  if (storage() == src.storage()) {
    TensorBase tmp = detail::empty_dense(src.sizes(), src.dtype());
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

  if (dtype() != src.dtype() && !is_pivot(dtype()) && !is_pivot(src.dtype())) {
    TensorBase pivot = detail::empty_dense(sizes(), pivot_for(dtype(), src.dtype()));
    pivot.copy_(src);
    return copy_(pivot);
  }

  IntArrayRef st[2] = {strides(), src_strides};
  const int64_t elem[2] = {int64_t(element_size()), int64_t(src.element_size())};
  char* bases[2] = {static_cast<char*>(data_ptr()), static_cast<char*>(src.data_ptr())};
  StridedGeometry g = make_geometry(sizes(), 2, st, elem, bases);
  copy_strided(g, dtype(), src.dtype());
  return *this;
}

const TensorBase& TensorBase::fill_(const Scalar& value) const {
  const char* op = "fill_";
  KILN_CHECK(defined(), ValueError, op, "self", "undefined tensor");
  KILN_CHECK(detail::scalar_fits(value, dtype()), ValueError, op, "value", "value ", value.str(),
             " cannot be converted to type ", dtype_name(dtype()), " without overflow");
  support::check_no_internal_overlap(op, "self", *this);
  bump_version();
  if (numel() == 0) return *this;
  if (!is_cpu()) {
    device_hooks(device().type, op).fill(*this, value);
    return *this;
  }
  IntArrayRef st[1] = {strides()};
  const int64_t elem[1] = {int64_t(element_size())};
  char* bases[1] = {static_cast<char*>(data_ptr())};
  StridedGeometry g = make_geometry(sizes(), 1, st, elem, bases);
  visit_dtype(dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = value.to<T>();
    cpu::strided_loop<T>(g, [v]() { return v; });
  });
  return *this;
}

}  // namespace kiln
