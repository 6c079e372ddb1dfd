// The CPU's copy_ and fill_ (device_copy.h): conversions over the iteration layer
// (kiln/cpu/loops.h), behind the core's device-independent checks.
#include <cstring>
#include <type_traits>
#include "device_copy.h"
#include "kiln/common/convert.h"
#include "kiln/cpu/loops.h"
#include "kiln/cpu/parallel.h"

namespace kiln::cpu {
namespace {

// dst = convert(src) over the iteration layer: a transposed source goes tile by tile, a
// broadcast one stores each value once per run, a dense one vectorizes.
template <typename D, typename S>
void copy_loop(const StridedGeometry& g) {
  conversion_loop<D, S>(g, [](S v) { return kiln::detail::convert<D>(v); });
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

// src's strides broadcast to dst's shape (0 on broadcast dims); the core checked that it broadcasts.
DimVector broadcast_strides(const TensorBase& src, IntArrayRef shape) {
  const size_t nd = shape.size(), sd = size_t(src.dim());
  DimVector out(nd, 0);
  for (size_t i = 0; i < sd; ++i) out[nd - 1 - i] = src.sizes()[sd - 1 - i] == 1 ? 0 : src.strides()[sd - 1 - i];
  return out;
}

}  // namespace

namespace detail {

void copy_(const TensorBase& dst, const TensorBase& src, bool) {
  // Reading and writing one buffer through two views could read already-written values.
  if (dst.storage() == src.storage()) {
    TensorBase tmp = kiln::detail::empty_dense(src.sizes(), src.dtype());
    tmp.copy_(src);
    dst.copy_(tmp);
    return;
  }
  // Same dtype, both dense in the same order: one memcpy.
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && src.numel() == dst.numel()) {
    char* d = static_cast<char*>(dst.data_ptr());
    const char* s = static_cast<const char*>(src.data_ptr());
    const size_t es = dst.element_size();
    kiln::detail::parallel_range(
        dst.numel(), [&](int64_t b, int64_t e) { std::memcpy(d + b * es, s + b * es, size_t(e - b) * es); });
    return;
  }
  if (dst.dtype() != src.dtype() && !is_pivot(dst.dtype()) && !is_pivot(src.dtype())) {
    TensorBase pivot = kiln::detail::empty_dense(dst.sizes(), pivot_for(dst.dtype(), src.dtype()));
    pivot.copy_(src);
    dst.copy_(pivot);
    return;
  }
  const DimVector src_strides = broadcast_strides(src, dst.sizes());
  IntArrayRef st[2] = {dst.strides(), src_strides};
  const int64_t elem[2] = {int64_t(dst.element_size()), int64_t(src.element_size())};
  char* bases[2] = {static_cast<char*>(dst.data_ptr()), static_cast<char*>(src.data_ptr())};
  copy_strided(make_geometry(dst.sizes(), 2, st, elem, bases), dst.dtype(), src.dtype());
}

void fill_(const TensorBase& dst, const Scalar& value) {
  IntArrayRef st[1] = {dst.strides()};
  const int64_t elem[1] = {int64_t(dst.element_size())};
  char* bases[1] = {static_cast<char*>(dst.data_ptr())};
  const StridedGeometry g = make_geometry(dst.sizes(), 1, st, elem, bases);
  visit_dtype(dst.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T v = value.to<T>();
    strided_loop<T>(g, [v]() { return v; });
  });
}

}  // namespace detail
}  // namespace kiln::cpu
