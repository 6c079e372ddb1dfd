// Per-call cost of the library itself: tiny tensors, where the arithmetic is negligible.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <kiln/autocast.h>
#include <kiln/kiln.h>

#include <optional>

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

// mm has an autocast policy: off, its entry pays one thread-local load (compare "tiny add");
// on, a region is entered and left around each call and the inputs are cast to bfloat16.
Case tiny_mm(bool autocast) {
  return {autocast ? "tiny mm in a CPU autocast region (bfloat16)" : "tiny mm (1x1)", "overhead", 0, 0, "", [autocast] {
            Twin a = twin_randn({1, 1}), b = twin_randn({1, 1});
            return Prepared{[a, b, autocast] {
                              std::optional<kiln::AutocastGuard> region;
                              if (autocast) region.emplace(kiln::DeviceType::CPU);
                              kiln::Tensor r = kiln::mm(a.k, b.k);
                            },
                            [a, b, autocast] {
                              if (autocast) {  // torch.autocast("cpu")'s enter and exit
                                at::autocast::increment_nesting();
                                at::autocast::set_cpu_enabled(true);
                              }
                              at::Tensor r = at::mm(a.t, b.t);
                              if (autocast) {
                                at::autocast::set_cpu_enabled(false);
                                if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
                              }
                            }};
          }};
}

}  // namespace

std::vector<Case> overhead_cases() {
  return {tiny_add(false), tiny_add(true), tiny_chain(), tiny_create(), tiny_mm(false), tiny_mm(true)};
}

}  // namespace kiln_bench
