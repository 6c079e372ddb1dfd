// copy_ and fill_, the writes every other op builds on: a transposing copy (contiguous() of a
// transposed matrix), a casting copy, a broadcasting copy and a fill, on 16M float32 elements.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kSide = 4096;
constexpr double kElems = double(kSide * kSide);

Case transposed_contiguous() {
  return {"contiguous of a.t() [4096,4096]", "copy", 2 * kElems * 4, 0, "", [] {
    Twin a = twin_randn({kSide, kSide});
    return Prepared{[a] { kiln::Tensor r = a.k.t().contiguous(); }, [a] { at::Tensor r = a.t.t().contiguous(); }};
  }};
}

Case cast_copy() {
  return {"copy_ float32 -> float64 16M", "copy", kElems * (4 + 8), 0, "", [] {
    Twin x = twin_randn({kSide * kSide});
    kiln::Tensor kout = kiln::empty({kSide * kSide}, kiln::TensorOptions(kiln::kFloat64));
    at::Tensor tout = at::empty({kSide * kSide}, at::kDouble);
    return Prepared{[x, kout]() mutable { kout.copy_(x.k); }, [x, tout]() mutable { tout.copy_(x.t); }};
  }};
}

Case broadcast_copy() {
  return {"copy_ a row into [4096,4096]", "copy", kElems * 4, 0, "", [] {
    Twin row = twin_randn({kSide}), out = twin_randn({kSide, kSide});
    return Prepared{[row, out]() mutable { out.k.copy_(row.k); }, [row, out]() mutable { out.t.copy_(row.t); }};
  }};
}

Case fill() {
  return {"fill_ 16M", "copy", kElems * 4, 0, "", [] {
    Twin out = twin_randn({kSide * kSide});
    return Prepared{[out]() mutable { out.k.fill_(1.5); }, [out]() mutable { out.t.fill_(1.5); }};
  }};
}

}  // namespace

std::vector<Case> copy_cases() {
  std::vector<Case> c;
  c.push_back(transposed_contiguous());
  c.push_back(cast_copy());
  c.push_back(broadcast_copy());
  c.push_back(fill());
  return c;
}

}  // namespace kiln_bench
