#ifndef KILN_RUNTIME_INCLUDE_KILN_DEVICE_HOOKS_H_
#define KILN_RUNTIME_INCLUDE_KILN_DEVICE_HOOKS_H_
// What the core asks of a device backend besides the ops' kernel tables: moving and filling
// bytes (TensorBase::copy_ and fill_ with that device on either side) and the Philox fills the
// random ops draw with. A backend registers one table for its device type when the program
// starts (kernels/cuda/device_hooks.cpp), so the core never names a backend's function: it
// asks device_hooks(type, op), which raises DeviceError naming the op when no backend for
// that type is linked. The CPU's table (kernels/cpu/device_hooks.cpp) is always linked.
#include <cstdint>
#include "kiln/device.h"
#include "kiln/generator.h"
#include "kiln/scalar.h"
#include "kiln/tensor_base.h"

namespace kiln {

struct DeviceHooks {
  const char* backend = "";  // the registering backend ("cuda"), for diagnostics
  // dst and src already checked (src broadcasts to dst, dst has no internal overlap, numel > 0);
  // either may be on the CPU.
  void (*copy)(const TensorBase& dst, const TensorBase& src, bool non_blocking) = nullptr;
  void (*fill)(const TensorBase& dst, const Scalar& value) = nullptr;
  // Fills of a contiguous tensor on the device, from the same Philox blocks as the CPU's
  // (kiln/common/random_blocks.h), so a seed gives one set of numbers on every device.
  void (*uniform_fill)(TensorBase& t, double from, double to, Generator& gen) = nullptr;
  void (*normal_fill)(TensorBase& t, double mean, double std, Generator& gen) = nullptr;
  // Integers uniform on [low, low + range), range >= 1, into a real dtype.
  void (*randint_fill)(TensorBase& t, int64_t low, uint64_t range, Generator& gen) = nullptr;
  // t[i] = 1 with probability p[i]; p contiguous, on t's device, of t's floating dtype.
  void (*bernoulli_fill)(TensorBase& t, const TensorBase& p, Generator& gen) = nullptr;
  // A random permutation of 0..t.numel()-1 into a 1-d tensor of a real dtype.
  void (*randperm_fill)(TensorBase& t, Generator& gen) = nullptr;
};

// Installs a copy of `hooks` for `type`, never the CPU (its table is cpu::host_hooks()). `copy`
// is required (ValueError otherwise); another null hook raises NotImplementedError naming its op
// when called. Returns true, so a backend can register from a static initializer.
bool register_device_hooks(DeviceType type, const DeviceHooks* hooks);

namespace cpu {
// The CPU's table, defined by the CPU kernels; named, not registered, so copy_ and fill_ work
// in any static initializer, before the registrations have run.
const DeviceHooks& host_hooks();
}  // namespace cpu

// The table of `type`'s backend. DeviceError naming `op` when none is linked (a build without
// CUDA: no CUDA tensor can exist there, since its allocator refuses first).
const DeviceHooks& device_hooks(DeviceType type, const char* op);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DEVICE_HOOKS_H_
