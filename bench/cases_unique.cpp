// Issue 15's data-dependent ops: unique of a long int64 line with many duplicates (with and
// without inverse and counts), quantile along rows, and repeat_interleave with tensor repeats.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kLine = 16 << 20, kDistinct = 1 << 20;

// n random integers in [0, bound) as a kiln int64 tensor and its libtorch twin.
Twin twin_ints(int64_t n, int64_t bound) {
  kiln::Tensor k = kiln::randint(bound, {n}, kiln::TensorOptions(kiln::DType::Int64));
  return {k, to_torch(k)};
}

Case unique_case(std::string name, bool inverse_and_counts) {
  // reads the line, writes the (at most 1M) values and, when asked, 16M inverse indices
  const double bytes = 8.0 * double(kLine) * (inverse_and_counts ? 2 : 1);
  return {std::move(name), "sorting", bytes, 0, "", [inverse_and_counts] {
            Twin x = twin_ints(kLine, kDistinct);
            const bool ic = inverse_and_counts;
            return Prepared{[x, ic] { auto r = kiln::_unique2(x.k, true, ic, ic); },
                            [x, ic] { auto r = at::_unique2(x.t, true, ic, ic); }};
          }};
}

}  // namespace

std::vector<Case> unique_cases() {
  return {
      unique_case("unique 16M int64 in [0,1M) sorted", false),
      unique_case("unique 16M int64 in [0,1M) sorted, inverse and counts", true),
      {"quantile [4096,1024] float32 dim=1, 3 q", "sorting", 4.0 * 4096 * 1024, 0, "",
       [] {
         Twin x = twin_randn({4096, 1024});
         kiln::Tensor qk = kiln::from_vector<float>({0.1f, 0.5f, 0.9f}, {3});
         at::Tensor qt = at::tensor({0.1f, 0.5f, 0.9f});
         return Prepared{[x, qk] { kiln::Tensor r = kiln::quantile(x.k, qk, 1); },
                         [x, qt] { at::Tensor r = at::quantile(x.t, qt, 1); }};
       }},
      {"repeat_interleave 4M float32, tensor repeats in [0,4)", "shape", 4.0 * 4 * (4 << 20), 0, "",
       [] {
         Twin x = twin_randn({4 << 20}), r = twin_ints(4 << 20, 4);
         return Prepared{[x, r] { kiln::Tensor y = kiln::repeat_interleave(x.k, r.k); },
                         [x, r] { at::Tensor y = at::repeat_interleave(x.t, r.t); }};
       }},
  };
}

}  // namespace kiln_bench
