// Shape ops that copy: flip along either dim of a [4096,4096] float32 matrix (a row reversal
// and a within-row reversal), tril, roll (two narrows and a cat) and repeat (an expand and a copy).
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kSide = 4096;
constexpr double kElems = double(kSide * kSide);

Case flip_dim(int64_t dim) {
  return {"flip [4096,4096] dim " + std::to_string(dim), "shape", 2 * kElems * 4, 0, "", [dim] {
            Twin a = twin_randn({kSide, kSide});
            return Prepared{[a, dim] { kiln::Tensor r = kiln::flip(a.k, {dim}); },
                            [a, dim] { at::Tensor r = at::flip(a.t, {dim}); }};
          }};
}

Case tril() {
  return {"tril [4096,4096]", "shape", 2 * kElems * 4, 0, "", [] {
            Twin a = twin_randn({kSide, kSide});
            return Prepared{[a] { kiln::Tensor r = kiln::tril(a.k); }, [a] { at::Tensor r = at::tril(a.t); }};
          }};
}

Case roll() {
  return {"roll [4096,4096] shift 7 dim 1", "shape", 2 * kElems * 4, 0, "", [] {
            Twin a = twin_randn({kSide, kSide});
            return Prepared{[a] { kiln::Tensor r = kiln::roll(a.k, {7}, {1}); },
                            [a] { at::Tensor r = at::roll(a.t, {7}, {1}); }};
          }};
}

Case repeat() {
  return {"repeat [1024,1024] x [2,2]", "shape", (1 + 4) * double(1024 * 1024) * 4, 0, "", [] {
            Twin a = twin_randn({1024, 1024});
            return Prepared{[a] { kiln::Tensor r = a.k.repeat({2, 2}); }, [a] { at::Tensor r = a.t.repeat({2, 2}); }};
          }};
}

}  // namespace

std::vector<Case> shape_cases() {
  std::vector<Case> c;
  c.push_back(flip_dim(0));
  c.push_back(flip_dim(1));
  c.push_back(tril());
  c.push_back(roll());
  c.push_back(repeat());
  return c;
}

}  // namespace kiln_bench
