// Factories and random draws: the values a training or inference program makes rather than
// reads. 16M-element float32 results (eye: 4096 x 4096), memory-bound except for the draws,
// whose cost is the generator's (kiln: Philox, counter-based and threaded; PyTorch's CPU:
// MT19937, sequential).
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include <functional>

#include "cases.h"

namespace kiln_bench {
namespace {

constexpr int64_t kSide = 4096;
constexpr int64_t kElems = kSide * kSide;

Case make(const char* name, double bytes, std::function<void()> kiln_fn, std::function<void()> torch_fn) {
  return {name, "factory", bytes, 0, "", [kiln_fn, torch_fn] { return Prepared{kiln_fn, torch_fn}; }};
}

}  // namespace

std::vector<Case> factory_cases() {
  const double bytes = double(kElems) * 4;
  std::vector<Case> c;
  c.push_back(make("zeros 16M", bytes, [] { kiln::Tensor r = kiln::zeros({kElems}); },
                   [] { at::Tensor r = at::zeros({kElems}); }));
  c.push_back(make("arange 16M float32", bytes, [] { kiln::Tensor r = kiln::arange(kElems, kiln::kFloat32); },
                   [] { at::Tensor r = at::arange(kElems, at::kFloat); }));
  c.push_back(make("linspace 16M", bytes, [] { kiln::Tensor r = kiln::linspace(-1, 1, kElems); },
                   [] { at::Tensor r = at::linspace(-1, 1, kElems); }));
  c.push_back(make("eye [4096,4096]", bytes, [] { kiln::Tensor r = kiln::eye(kSide); },
                   [] { at::Tensor r = at::eye(kSide); }));
  c.push_back(make("rand 16M", bytes, [] { kiln::Tensor r = kiln::rand({kElems}); },
                   [] { at::Tensor r = at::rand({kElems}); }));
  c.push_back(make("randn 16M", bytes, [] { kiln::Tensor r = kiln::randn({kElems}); },
                   [] { at::Tensor r = at::randn({kElems}); }));
  return c;
}

}  // namespace kiln_bench
