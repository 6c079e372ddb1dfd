// Per-call cost of the library itself: tiny tensors, where the arithmetic is negligible.
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

Case tiny_add(bool record) {
  return {record ? "tiny add, autograd recording" : "tiny add (1 element)", "overhead", 0, 0, "", [record] {
    Twin a = twin_randn({1}), b = twin_randn({1});
    if (record) {
      a.k.requires_grad_();
      a.t.requires_grad_();
    }
    return Prepared{[a, b] { kiln::Tensor r = kiln::add(a.k, b.k); },
                    [a, b] { at::Tensor r = at::add(a.t, b.t); }};
  }};
}

// Ten ops as a user writes them, scalars included.
Case tiny_chain() {
  return {"chain of 10 tiny ops", "overhead", 0, 0, "", [] {
    Twin a = twin_randn({1}), b = twin_randn({1});
    return Prepared{[a, b] {
                      kiln::Tensor r = ((a.k + b.k) * 2.0 - b.k).relu().exp().neg().abs().sqrt().tanh().sigmoid();
                    },
                    [a, b] {
                      at::Tensor r = ((a.t + b.t) * 2.0 - b.t).relu().exp().neg().abs().sqrt().tanh().sigmoid();
                    }};
  }};
}

Case tiny_create() {
  return {"create a tiny tensor (zeros [1])", "overhead", 0, 0, "", [] {
    return Prepared{[] { kiln::Tensor r = kiln::zeros({1}); }, [] { at::Tensor r = at::zeros({1}); }};
  }};
}

}  // namespace

std::vector<Case> overhead_cases() { return {tiny_add(false), tiny_add(true), tiny_chain(), tiny_create()}; }

}  // namespace kiln_bench
