// The CUDA backend's hooks (kiln/device_hooks.h): copies and fills with a CUDA tensor on either
// side, and the Philox fills, registered for DeviceType::CUDA when the program starts.
#include "kiln/device_hooks.h"
#include "device_copy.h"
#include "device_random.h"

namespace kiln::cuda {
namespace {

constexpr DeviceHooks kCudaHooks = [] {
  DeviceHooks h;
  h.backend = "cuda";
  h.copy = detail::copy_;
  h.fill = detail::fill_;
  h.uniform_fill = detail::uniform_fill;
  h.normal_fill = detail::normal_fill;
  h.randint_fill = detail::randint_fill;
  h.bernoulli_fill = detail::bernoulli_fill;
  h.randperm_fill = detail::randperm_fill;
  return h;
}();

const bool kRegistered = register_device_hooks(DeviceType::CUDA, &kCudaHooks);

}  // namespace
}  // namespace kiln::cuda

// kiln's link options name this symbol undefined (CMakeLists.txt: --undefined), so a program
// linking the static archive takes this object, and with it the registration above, although
// nothing calls into it by name.
extern "C" bool kiln_cuda_device_hooks_anchor() { return kiln::cuda::kRegistered; }
