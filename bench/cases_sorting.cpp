// Sorting: one long line (kiln's radix sort against libtorch's comparison sort) and topk with
// a small k over many rows.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr double kF = 4.0;

template <typename K, typename T>
Case sorting(std::string name, std::vector<int64_t> sizes, double bytes_per_element, K k, T t) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return {std::move(name), "sorting", bytes_per_element * double(n), 0, "", [sizes, k, t] {
            Twin x = twin_randn(sizes);
            return Prepared{[x, k] { auto r = k(x.k); }, [x, t] { auto r = t(x.t); }};
          }};
}

}  // namespace

std::vector<Case> sorting_cases() {
  return {
      // reads the line, writes values and int64 indices
      sorting(
          "sort 16M float32", {16 << 20}, kF + kF + 8, [](const kiln::Tensor& x) { return kiln::sort(x); },
          [](const at::Tensor& x) { return at::sort(x); }),
      sorting(
          "topk k=10 [4096,32000] float32", {4096, 32000}, kF, [](const kiln::Tensor& x) { return kiln::topk(x, 10); },
          [](const at::Tensor& x) { return at::topk(x, 10); }),
  };
}

}  // namespace kiln_bench
