#ifndef KILN_KERNELS_CPU_RADIX_SORT_H_
#define KILN_KERNELS_CPU_RADIX_SORT_H_
// A stable LSD radix sort of unsigned keys with an index payload, for the sorting kernels:
// linear in the line's length where a comparison sort is n log n, and stable by construction.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::cpu {

// Scratch of one line's keys and indices (a thread keeps one across its lines).
template <typename K>
struct LineScratch {
  std::vector<K> keys, keys_tmp;
  std::vector<uint32_t> idx, idx_tmp;
  void reserve(int64_t n) {
    keys.resize(size_t(n));
    idx.resize(size_t(n));
  }
};

// Sorts keys[0, n) with idx alongside, stably; the result is left in keys/idx.
template <typename K>
void radix_sort_line(LineScratch<K>& s, int64_t n) {
  K* keys = s.keys.data();
  uint32_t* idx = s.idx.data();
  if (n <= 32) {  // insertion sort: a short line costs less than one histogram
    for (int64_t i = 1; i < n; ++i) {
      const K k = keys[i];
      const uint32_t v = idx[i];
      int64_t j = i - 1;
      for (; j >= 0 && keys[j] > k; --j) {
        keys[j + 1] = keys[j];
        idx[j + 1] = idx[j];
      }
      keys[j + 1] = k;
      idx[j + 1] = v;
    }
    return;
  }
  constexpr int kDigits = int(sizeof(K));
  // Every digit's histogram in one read; a digit every key shares needs no pass.
  std::vector<uint32_t> hist(size_t(kDigits) * 256, 0);
  for (int64_t i = 0; i < n; ++i) {
    const K k = keys[i];
    for (int d = 0; d < kDigits; ++d) ++hist[size_t(d) * 256 + ((k >> (8 * d)) & 0xff)];
  }
  s.keys_tmp.resize(size_t(n));
  s.idx_tmp.resize(size_t(n));
  K* kt = s.keys_tmp.data();
  uint32_t* it = s.idx_tmp.data();
  for (int d = 0; d < kDigits; ++d) {
    uint32_t* h = &hist[size_t(d) * 256];
    const K first = (keys[0] >> (8 * d)) & 0xff;
    if (h[first] == uint32_t(n)) continue;
    uint32_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      const uint32_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; ++i) {
      const K k = keys[i];
      const uint32_t to = h[(k >> (8 * d)) & 0xff]++;
      kt[to] = k;
      it[to] = idx[i];
    }
    std::swap(keys, kt);
    std::swap(idx, it);
  }
  if (keys != s.keys.data()) {  // an odd number of passes ended in the scratch copy
    std::memcpy(s.keys.data(), keys, size_t(n) * sizeof(K));
    std::memcpy(s.idx.data(), idx, size_t(n) * sizeof(uint32_t));
  }
}

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_RADIX_SORT_H_
