// The registered backends' hook tables (kiln/device_hooks.h), one per device type. Written by
// static initializers before main, read afterwards: an atomic pointer keeps a late
// registration (a backend in a library loaded at run time) safe to read from any thread.
#include "kiln/device_hooks.h"
#include <atomic>
#include "kiln/error.h"

namespace kiln {
namespace {
std::atomic<const DeviceHooks*> g_hooks[kNumDeviceTypes];

// What a hook the backend left null does: an out-of-tree backend may serve copies and no random
// fills, and the core calls the hooks without testing them.
[[noreturn]] void no_hook(const TensorBase& t, const char* op) {
  KILN_FAIL(NotImplementedError, op, "self", "the ", device_type_name(t.device().type), " backend (", t.device().str(),
            ") has no ", op, " hook");
}
void no_fill(const TensorBase& t, const Scalar&) { no_hook(t, "fill_"); }
void no_uniform(TensorBase& t, double, double, Generator&) { no_hook(t, "uniform_"); }
void no_normal(TensorBase& t, double, double, Generator&) { no_hook(t, "normal_"); }
void no_randint(TensorBase& t, int64_t, uint64_t, Generator&) { no_hook(t, "randint"); }
void no_bernoulli(TensorBase& t, const TensorBase&, Generator&) { no_hook(t, "bernoulli"); }
void no_randperm(TensorBase& t, Generator&) { no_hook(t, "randperm"); }

template <typename Fn>
void or_else(Fn& hook, Fn fallback) {
  if (!hook) hook = fallback;
}
}  // namespace

bool register_device_hooks(DeviceType type, const DeviceHooks* hooks) {
  KILN_CHECK(type != DeviceType::CPU, ValueError, "register_device_hooks", "type",
             "the CPU's hooks are the CPU kernels' own (cpu::host_hooks)");
  KILN_CHECK(hooks != nullptr, ValueError, "register_device_hooks", "hooks", "a null table");
  KILN_CHECK(hooks->copy != nullptr, ValueError, "register_device_hooks", "hooks",
             "a table without copy: .to() could not reach the device");
  // A copy with the missing hooks filled in; never freed, as a caller may still hold a replaced one.
  auto* table = new DeviceHooks(*hooks);
  or_else(table->fill, &no_fill);
  or_else(table->uniform_fill, &no_uniform);
  or_else(table->normal_fill, &no_normal);
  or_else(table->randint_fill, &no_randint);
  or_else(table->bernoulli_fill, &no_bernoulli);
  or_else(table->randperm_fill, &no_randperm);
  g_hooks[int(type)].store(table, std::memory_order_release);
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
