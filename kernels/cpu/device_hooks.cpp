// The CPU's hook table (kiln/device_hooks.h): copies, fills and the Philox fills of CPU
// tensors, the same entry points the CUDA backend registers for its device.
#include "kiln/device_hooks.h"
#include "device_copy.h"
#include "device_random.h"

namespace kiln::cpu {
namespace {

constexpr DeviceHooks kCpuHooks = [] {
  DeviceHooks h;
  h.backend = "cpu";
  h.copy = detail::copy_;
  h.fill = detail::fill_;
  h.uniform_fill = detail::uniform_fill;
  h.normal_fill = detail::normal_fill;
  h.randint_fill = detail::randint_fill;
  h.bernoulli_fill = detail::bernoulli_fill;
  h.randperm_fill = detail::randperm_fill;
  return h;
}();

}  // namespace

const DeviceHooks& host_hooks() { return kCpuHooks; }

}  // namespace kiln::cpu
