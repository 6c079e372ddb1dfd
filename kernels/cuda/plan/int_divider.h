#ifndef KILN_KERNELS_CUDA_PLAN_INT_DIVIDER_H_
#define KILN_KERNELS_CUDA_PLAN_INT_DIVIDER_H_
// Division by a divisor fixed at launch time, for turning a linear index into coordinates.
// A GPU integer division is a ~20-instruction sequence; with a precomputed "magic" multiplier
// it is one multiply-high, one add and one shift (Granlund & Montgomery, "Division by
// invariant integers using multiplication", 1994). Plain C++ with KILN_HOST_DEVICE, so the
// host tests check it against `/` and `%` for every divisor class.
#include <cstdint>
#include "kiln/macros.h"

namespace kiln::cuda_plan {

template <typename Index>
struct DivMod {
  Index div, mod;
};

// 64-bit indices (tensors past 2^31 elements or bytes): ordinary division.
template <typename Index>
struct IntDivider {
  Index divisor = 1;
  IntDivider() = default;
  explicit IntDivider(Index d) : divisor(d) {}
  KILN_HOST_DEVICE Index div(Index n) const { return n / divisor; }
  KILN_HOST_DEVICE DivMod<Index> divmod(Index n) const { return {n / divisor, n % divisor}; }
};

// 32-bit indices: valid for n < 2^31 and 1 <= divisor < 2^31 (the launcher only picks 32-bit
// indexing when every index and byte offset fits in int32).
template <>
struct IntDivider<uint32_t> {
  uint32_t divisor = 1, magic = 0, shift = 0;
  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t(1) << shift) < d) ++shift;  // shift = ceil(log2(d))
    magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
  KILN_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t hi = __umulhi(n, magic);
#else
    uint32_t hi = uint32_t((uint64_t(n) * magic) >> 32);
#endif
    return uint32_t((uint64_t(hi) + n) >> shift);
  }
  KILN_HOST_DEVICE DivMod<uint32_t> divmod(uint32_t n) const {
    uint32_t q = div(n);
    return {q, n - q * divisor};
  }
};

}  // namespace kiln::cuda_plan
#endif  // KILN_KERNELS_CUDA_PLAN_INT_DIVIDER_H_
