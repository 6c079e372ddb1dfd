#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOCAST_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOCAST_H_
// Automatic mixed precision, as torch.autocast (PyTorch 1.13). Inside an AutocastGuard an op
// whose registry entry declares a cast policy (`autocast:` in ops/*.yaml, codegen/README.md)
// casts its floating inputs on the guard's device first: to the region's lower-precision dtype
// (mm, linear, ...), to float32 (losses, log, exp, ...) or to the widest of them (cat, stack).
// float64 inputs and tensors on another device type are left alone. The cast is an ordinary
// to() call, so autograd records it and gradients reach the inputs in their own dtype. Casts of
// leaves that require grad (weights) are cached until the outermost region ends.
// State is per thread, as PyTorch's.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/tensor_base.h"

namespace kiln {

// How an op's floating inputs are cast inside an autocast region (one per device type).
enum class CastPolicy : uint8_t { None, LowerPrecision, Float32, Promote };

// torch.autocast(device_type, dtype, enabled, cache_enabled). dtype defaults to bfloat16 on
// the CPU (its only choice) and float16 on CUDA (or bfloat16). Regions nest; each restores what
// it found, and leaving the outermost one clears the weight cast cache.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device, std::optional<DType> dtype = std::nullopt, bool enabled = true,
                         std::optional<bool> cache_enabled = std::nullopt);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_enabled_, prev_cache_;
  DType prev_dtype_;
};

// Autocast off on every device for a scope, keeping dtypes and cache: the autograd engine runs
// backward under it, so gradients are computed in the dtypes forward chose (as PyTorch
// advises). An AutocastGuard inside turns a device on again (checkpoint's recomputation).
class AutocastOffGuard {
 public:
  AutocastOffGuard();
  ~AutocastOffGuard();
  AutocastOffGuard(const AutocastOffGuard&) = delete;
  AutocastOffGuard& operator=(const AutocastOffGuard&) = delete;

 private:
  bool prev_[kNumDeviceTypes];
};

// torch.is_autocast_enabled() (CUDA) and torch.is_autocast_cpu_enabled().
bool is_autocast_enabled();
bool is_autocast_cpu_enabled();

namespace autocast {

bool is_enabled(DeviceType device);
// The dtype LowerPrecision casts to on `device` (torch.get_autocast_cpu_dtype/get_autocast_gpu_dtype).
DType lower_precision_dtype(DeviceType device);
bool is_cache_enabled();  // torch.is_autocast_cache_enabled()
void clear_cache();       // torch.clear_autocast_cache()
size_t cache_size();      // the number of cached weight casts (for tests)

// ---- what the generated op entries use ----
namespace detail {
// Bit 0: CPU autocast on, bit 1: CUDA on, bit 2: inside an op's autocast call (excluded).
enum : uint8_t { kCpuOn = 1, kCudaOn = 2, kExcluded = 4 };
inline thread_local uint8_t t_flags = 0;
}  // namespace detail

// Some device's autocast is on and this is not an op's inner call: flags 1, 2 or 3. One
// thread-local load and a compare, the whole cost of autocast to an op while it is off.
inline bool active() { return unsigned(detail::t_flags) - 1u < 3u; }

struct Policies {
  CastPolicy cpu, cuda;
};
// What an op's floating inputs on `device` are cast to.
struct Target {
  DType dtype;
  DeviceType device;
};
// The cast for the device type of the op's first defined tensor, or nullopt when that
// device's autocast is off or the op has no policy there.
std::optional<Target> target_dtype(Policies policies, std::initializer_list<const TensorBase*> tensors,
                                   std::initializer_list<const TensorList*> lists = {});
// `t` cast to the target dtype when autocast casts it (defined, floating but not float64, on
// the target's device type, of another dtype), else `t`. Recorded by autograd like to(); a
// float32 leaf that requires grad is cast to the lower-precision dtype once per outermost region.
TensorBase cast(const TensorBase& t, const Target& to);
TensorList cast(const TensorList& tensors, const Target& to);

// Autocast is off for the op's inner call and everything it calls (PyTorch excludes the
// Autocast dispatch key there), so a composite's parts are not cast again.
class ExcludeGuard {
 public:
  ExcludeGuard() : prev_(detail::t_flags) { detail::t_flags = uint8_t(prev_ | detail::kExcluded); }
  ~ExcludeGuard() { detail::t_flags = uint8_t((detail::t_flags & ~detail::kExcluded) | (prev_ & detail::kExcluded)); }
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  uint8_t prev_;
};

}  // namespace autocast
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOCAST_H_
