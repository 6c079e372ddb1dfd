// Searching and counting (issue 15): searchsorted and bucketize of 1M float32 values into a
// sorted 64k sequence, histc of 16M float32 into 100 bins, bincount of 16M int64 in [0, 1000),
// histogram of 16M float32 into 100 bins over the data's range and into a sorted 1000-edge tensor.
// Both sides get the same tensors.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kValues = 1 << 20, kSequence = 1 << 16, kCount = 16 << 20;

// A sorted sequence of n float32 normals, kiln's and libtorch's copy.
Twin twin_sorted(int64_t n) {
  kiln::Tensor k = std::get<0>(kiln::sort(kiln::randn({n})));
  return {k, to_torch(k)};
}

}  // namespace

std::vector<Case> searching_cases() {
  return {
      {"searchsorted 1M float32 into sorted 64k", "searching", double(kValues) * (4 + 8), 0, "",
       [] {
         Twin seq = twin_sorted(kSequence), v = twin_randn({kValues});
         return Prepared{[seq, v] { kiln::Tensor r = kiln::searchsorted(seq.k, v.k); },
                         [seq, v] { at::Tensor r = at::searchsorted(seq.t, v.t); }};
       }},
      {"bucketize 1M float32 into sorted 64k", "searching", double(kValues) * (4 + 8), 0, "",
       [] {
         Twin seq = twin_sorted(kSequence), v = twin_randn({kValues});
         return Prepared{[seq, v] { kiln::Tensor r = kiln::bucketize(v.k, seq.k); },
                         [seq, v] { at::Tensor r = at::bucketize(v.t, seq.t); }};
       }},
      {"histc 16M float32 100 bins", "searching", double(kCount) * 4, 0, "",
       [] {
         Twin x = twin_randn({kCount});
         return Prepared{[x] { kiln::Tensor r = kiln::histc(x.k, 100, -3, 3); },
                         [x] { at::Tensor r = at::histc(x.t, 100, -3, 3); }};
       }},
      {"bincount 16M int64 in [0,1000)", "searching", double(kCount) * 8, 0, "",
       [] {
         kiln::Tensor k = kiln::randint(1000, {kCount}, kiln::TensorOptions(kiln::DType::Int64));
         Twin x{k, to_torch(k)};
         return Prepared{[x] { kiln::Tensor r = kiln::bincount(x.k); }, [x] { at::Tensor r = at::bincount(x.t); }};
       }},
      {"histogram 16M float32 100 bins", "searching", double(kCount) * 4, 0, "",
       [] {
         Twin x = twin_randn({kCount});
         return Prepared{[x] { auto r = kiln::histogram(x.k, 100); }, [x] { auto r = at::histogram(x.t, 100); }};
       }},
      {"histogram 16M float32 into 1000 edges", "searching", double(kCount) * 4, 0, "",
       [] {
         Twin x = twin_randn({kCount}), edges = twin_sorted(1000);
         return Prepared{[x, edges] { auto r = kiln::histogram(x.k, edges.k); },
                         [x, edges] { auto r = at::histogram(x.t, edges.t); }};
       }},
  };
}

}  // namespace kiln_bench
