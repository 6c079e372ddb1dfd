#ifndef KILN_RUNTIME_INCLUDE_KILN_DISPATCH_H_
#define KILN_RUNTIME_INCLUDE_KILN_DISPATCH_H_
// Kernel lookup for generated op entries. Each op's entry holds its own table of kernels by
// (device type, layout), constant-initialized from the backends it is declared for, so adding
// an op adds a table in its own file and changes no header another op includes. A null entry
// falls back to the kernels an out-of-tree backend registered at run time (kiln/backend_registry.h),
// then is reported as a NotImplementedError naming the backends that have the op. A CUDA kernel runs
// with its tensors' device current: its launches, the legacy default stream's included, go to
// that device whatever device the caller had made current.
#include <type_traits>
#include <typeinfo>
#include <utility>
#include "kiln/cuda_device.h"
#include "kiln/device.h"
#include "kiln/layout.h"
#include "kiln/macros.h"

namespace kiln {

template <typename Fn>
using KernelTable = Fn[kNumDeviceTypes][kNumLayouts];

[[noreturn]] void throw_missing_kernel(const char* op, Device device, Layout layout,
                                       const bool (&have)[kNumDeviceTypes][kNumLayouts]);

// A kernel found for a device: calling it calls the kernel, on a CUDA device under a
// cuda::DeviceGuard (a no-op when the device already is the current one).
template <typename Fn>
struct BoundKernel {
  Fn fn;
  Device device;
  template <typename... Args>
  KILN_INLINE void operator()(Args&&... args) const {
    if (KILN_UNLIKELY(device.type == DeviceType::CUDA)) {
      const cuda::DeviceGuard on_device(device.index);
      fn(std::forward<Args>(args)...);
      return;
    }
    fn(std::forward<Args>(args)...);
  }
};

namespace detail {
// Kernels registered at run time (kiln/backend_registry.h) are stored as this one pointer type
// with the typeid of their real type; registered_kernel returns the one for (op, device type,
// layout), null when none, and raises ValueError naming the op when its type is not `type`.
using ErasedKernel = void (*)();
ErasedKernel registered_kernel(const char* op, Device device, Layout layout, const std::type_info& type);

// The slow path of kernel_for, out of line so the constant-table path stays a load and a test:
// a run-time-registered kernel, else the NotImplementedError.
template <typename Fn>
[[gnu::noinline, gnu::cold]] Fn registered_kernel_or_throw(const KernelTable<Fn>& table, Device device,
                                                           Layout layout, const char* op) {
  static_assert(std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>,
                "kernel tables hold function pointers");
  if (ErasedKernel k = registered_kernel(op, device, layout, typeid(Fn))) return reinterpret_cast<Fn>(k);
  bool have[kNumDeviceTypes][kNumLayouts];
  for (int d = 0; d < kNumDeviceTypes; ++d)
    for (int l = 0; l < kNumLayouts; ++l) have[d][l] = table[d][l] != nullptr;
  throw_missing_kernel(op, device, layout, have);
}
}  // namespace detail

// The kernel of `table` for `device` and `layout`, else one registered at run time for the op,
// else a NotImplementedError.
template <typename Fn>
KILN_INLINE BoundKernel<Fn> kernel_for(const KernelTable<Fn>& table, Device device, Layout layout, const char* op) {
  Fn fn = table[int(device.type)][int(layout)];
  if (KILN_UNLIKELY(!fn)) fn = detail::registered_kernel_or_throw(table, device, layout, op);
  return {fn, device};
}

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DISPATCH_H_
