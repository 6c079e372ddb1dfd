#ifndef KILN_KERNELS_COMMON_ELEMENT_BYTES_H_
#define KILN_KERNELS_COMMON_ELEMENT_BYTES_H_
// Kernels that only move elements (gather, index_select, take, index_copy) need no arithmetic,
// so they are compiled once per element size rather than once per dtype: f(E{}) with E an
// unsigned type of that size (Bytes16 for complex128). Host-side dispatch for CPU and CUDA.
#include <cstddef>
#include <cstdint>

namespace kiln::bytes {

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <typename F>
decltype(auto) visit_element_size(size_t size, F&& f) {
  switch (size) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: return f(Bytes16{});
  }
}

}  // namespace kiln::bytes
#endif  // KILN_KERNELS_COMMON_ELEMENT_BYTES_H_
