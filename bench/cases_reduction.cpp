// Reductions over 16M float32 elements, over short rows (a global average pool's 7 x 7 planes),
// row softmax and cumsum.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr double kF = 4.0;

template <typename K, typename T>
Case reduce(std::string name, std::vector<int64_t> sizes, double bytes_per_element, K k, T t) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return {std::move(name), "reduction", bytes_per_element * double(n), 0, "", [sizes, k, t] {
    Twin x = twin_randn(sizes);
    return Prepared{[x, k] { kiln::Tensor r = k(x.k); }, [x, t] { at::Tensor r = t(x.t); }};
  }};
}

}  // namespace

std::vector<Case> reduction_cases() {
  const std::vector<int64_t> big{4096, 4096}, rows{4096, 1024}, short_rows{32768, 49};
  return {
      reduce("sum all [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.sum(); },
             [](const at::Tensor& x) { return x.sum(); }),
      reduce("sum last dim [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.sum(-1); },
             [](const at::Tensor& x) { return x.sum(-1); }),
      reduce("sum dim 0 [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.sum(0); },
             [](const at::Tensor& x) { return x.sum(0); }),
      reduce("max all [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.max(); },
             [](const at::Tensor& x) { return x.max(); }),
      reduce("argmax last dim [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.argmax(-1); },
             [](const at::Tensor& x) { return x.argmax(-1); }),
      reduce("mean all [4096,4096]", big, kF, [](const kiln::Tensor& x) { return x.mean(); },
             [](const at::Tensor& x) { return x.mean(); }),
      reduce("mean last dim [32768,49]", short_rows, kF, [](const kiln::Tensor& x) { return x.mean(-1); },
             [](const at::Tensor& x) { return x.mean(-1); }),
      reduce("amax last dim [32768,49]", short_rows, kF, [](const kiln::Tensor& x) { return kiln::amax(x, {-1}); },
             [](const at::Tensor& x) { return at::amax(x, {-1}); }),
      reduce("softmax last dim [4096,1024]", rows, 2 * kF, [](const kiln::Tensor& x) { return kiln::softmax(x, -1); },
             [](const at::Tensor& x) { return at::softmax(x, -1); }),
      reduce("log_softmax last dim [4096,1024]", rows, 2 * kF,
             [](const kiln::Tensor& x) { return kiln::log_softmax(x, -1); },
             [](const at::Tensor& x) { return at::log_softmax(x, -1); }),
      reduce("cumsum last dim [4096,1024]", rows, 2 * kF, [](const kiln::Tensor& x) { return kiln::cumsum(x, -1); },
             [](const at::Tensor& x) { return at::cumsum(x, -1); }),
  };
}

}  // namespace kiln_bench
