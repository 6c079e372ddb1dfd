// The device hooks (kiln/device_hooks.h): how copy_, fill_ and the random fills reach a device
// backend without the core naming its functions. A CUDA build's test executable must have the
// CUDA table registered even though nothing in it calls the backend's hooks object by name
// (the linker takes it through kiln's --undefined anchor); a build without CUDA has none. The
// CPU's table is always there: the core reaches it by name (kernels/cpu/device_hooks.cpp).
#include <doctest/doctest.h>

#include "kiln/cuda.h"
#include "kiln/device_hooks.h"
#include "support/test_helpers.h"

using namespace kiln;
using testing::error_text;
using testing::has;

TEST_CASE("device hooks: the CUDA backend's table is registered exactly when it is built") {
  if (cuda::is_built()) {
    const DeviceHooks& h = device_hooks(DeviceType::CUDA, "copy_");
    CHECK(std::string(h.backend) == "cuda");
    CHECK((h.copy != nullptr));
    CHECK((h.fill != nullptr));
    CHECK((h.uniform_fill != nullptr));
    CHECK((h.normal_fill != nullptr));
    CHECK((h.randint_fill != nullptr));
    CHECK((h.bernoulli_fill != nullptr));
    CHECK((h.randperm_fill != nullptr));
  } else {
    std::string msg = error_text<DeviceError>([] { (void)device_hooks(DeviceType::CUDA, "uniform_"); });
    INFO(msg);
    CHECK(has(msg, "uniform_"));
    CHECK(has(msg, "no cuda backend is linked"));
  }
}

TEST_CASE("device hooks: the CPU's table is the CPU kernels', and no other may be registered") {
  const DeviceHooks& h = device_hooks(DeviceType::CPU, "fill_");
  CHECK(&h == &cpu::host_hooks());
  CHECK(std::string(h.backend) == "cpu");
  CHECK((h.copy != nullptr));
  CHECK((h.fill != nullptr));
  CHECK((h.uniform_fill != nullptr));
  CHECK((h.normal_fill != nullptr));
  CHECK((h.randint_fill != nullptr));
  CHECK((h.bernoulli_fill != nullptr));
  CHECK((h.randperm_fill != nullptr));
  CHECK(has(error_text<ValueError>([] { register_device_hooks(DeviceType::CPU, &cpu::host_hooks()); }), "CPU"));
  CHECK(has(error_text<ValueError>([] { register_device_hooks(DeviceType::CUDA, nullptr); }), "hooks"));
}
