// The registered backends' hook tables (kiln/device_hooks.h), one per device type. Written by
// static initializers before main, read afterwards: an atomic pointer keeps a late
// registration (a backend in a library loaded at run time) safe to read from any thread.
#include "kiln/device_hooks.h"
#include <atomic>
#include "kiln/error.h"

namespace kiln {
namespace {
std::atomic<const DeviceHooks*> g_hooks[kNumDeviceTypes];
}  // namespace

bool register_device_hooks(DeviceType type, const DeviceHooks* hooks) {
  KILN_CHECK(type != DeviceType::CPU, ValueError, "register_device_hooks", "type",
             "the CPU's hooks are the CPU kernels' own (cpu::host_hooks)");
  KILN_CHECK(hooks != nullptr, ValueError, "register_device_hooks", "hooks", "a null table");
  g_hooks[int(type)].store(hooks, std::memory_order_release);
  return true;
}

const DeviceHooks& device_hooks(DeviceType type, const char* op) {
  if (type == DeviceType::CPU) return cpu::host_hooks();
  const DeviceHooks* hooks = g_hooks[int(type)].load(std::memory_order_acquire);
  KILN_CHECK(hooks != nullptr, DeviceError, op, "", "no ", device_type_name(type),
             " backend is linked into this program (kiln was built without it)");
  return *hooks;
}

}  // namespace kiln
