#ifndef KILN_KERNELS_COMMON_SORT_KEYS_H_
#define KILN_KERNELS_COMMON_SORT_KEYS_H_
// Order-preserving unsigned keys of the sorting ops, shared by the CPU and CUDA kernels:
// comparing keys as unsigned integers orders the values as PyTorch's sort does (-0 == +0,
// every NaN equal and above +inf), so a radix sort of the keys is a stable value sort.
// Descending order is the complement of the key (ties keep their order, NaN comes first).
#include <cstdint>
#include <cstring>
#include <type_traits>
#include "kiln/dtype.h"

namespace kiln::sort_keys {

template <typename T>
struct KeyOf {
  // 64-bit keys for 64-bit values, 32-bit for the rest (16-bit floats go through float).
  static constexpr bool kWide = sizeof(T) == 8;
  using K = std::conditional_t<kWide, uint64_t, uint32_t>;
  static constexpr bool kFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  static constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  static constexpr K kNaN = ~K(0);  // floating types only: above every number's key

  KILN_HOST_DEVICE static K key(T x) {
    if constexpr (std::is_same_v<T, bool>) {
      return K(x);
    } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      return K(x);
    } else if constexpr (std::is_integral_v<T>) {
      using S = std::conditional_t<kWide, int64_t, int32_t>;
      return K(S(x)) ^ kSign;
    } else {
      using F = std::conditional_t<kWide, double, float>;
      const F f = F(x);
      if (f != f) return kNaN;
      K bits;
      memcpy(&bits, &f, sizeof(bits));
      if (f == F(0)) bits = 0;  // -0 sorts with +0
      return (bits & kSign) ? ~bits : (bits | kSign);
    }
  }
  // The value of a key: exact for integers and for floats other than -0 and NaN payloads (the
  // kernels read those back from the input).
  KILN_HOST_DEVICE static T value(K k) {
    if constexpr (std::is_same_v<T, bool>) {
      return k != 0;
    } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
      return T(k);
    } else if constexpr (std::is_integral_v<T>) {
      using S = std::conditional_t<kWide, int64_t, int32_t>;
      return T(S(k ^ kSign));
    } else {
      using F = std::conditional_t<kWide, double, float>;
      const K bits = (k & kSign) ? (k ^ kSign) : ~k;
      F f;
      memcpy(&f, &bits, sizeof(f));
      return T(f);
    }
  }
  KILN_HOST_DEVICE static bool is_nan(K k) { return kFloat && k == kNaN; }
  // The value at the sorted place of `k` (an ascending key) whose element is x[src]: decoded,
  // except where the key lost bits (-0, a NaN's payload, 16-bit floats): those are read.
  KILN_HOST_DEVICE static T value_or_input(K k, const T* x, int64_t src) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return x[src];
    else if constexpr (kFloat) return (k == kSign || k == kNaN) ? x[src] : value(k);
    else return value(k);
  }
};

// What a selection reads off a sorted line.
enum class Pick { Rank, Median, NanMedian, Mode };

// The place of the answer on one line's n ascending keys sorted stably (NaN keys last):
// Rank: `rank`; Median: the lower middle, or the first NaN when there is one; NanMedian: the
// lower middle of the numbers (place 0 when all are NaN); Mode: the last place of the
// longest run of equal keys (the first of equally long ones; NaNs are never equal, as in
// PyTorch, so each is a run of one).
template <typename T, typename K>
KILN_HOST_DEVICE int64_t pick_place(Pick how, int64_t rank, const K* keys, int64_t n) {
  using KO = KeyOf<T>;
  if (how == Pick::Rank) return rank;
  if (how == Pick::Mode) {
    int64_t best_end = 0, best_len = 0;
    for (int64_t j = 0; j < n;) {
      int64_t e = j + 1;
      if (!KO::is_nan(keys[j]))
        while (e < n && keys[e] == keys[j]) ++e;
      if (e - j > best_len) best_len = e - j, best_end = e - 1;
      j = e;
    }
    return best_end;
  }
  int64_t nans = 0;
  while (nans < n && KO::is_nan(keys[n - 1 - nans])) ++nans;
  if (how == Pick::Median) return nans > 0 ? n - nans : (n - 1) / 2;
  const int64_t m = n - nans;
  return m > 0 ? (m - 1) / 2 : 0;
}

}  // namespace kiln::sort_keys
#endif  // KILN_KERNELS_COMMON_SORT_KEYS_H_
