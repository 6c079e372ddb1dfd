// Without a CUDA device (every machine kiln is developed on) — or without the CUDA backend —
// asking for one gives a kiln::DeviceError that names the call and says why; nothing crashes.
// On a machine with a device these checks do not apply and the test returns early.
#include <doctest/doctest.h>

#include "kiln/cuda.h"
#include "support/test_helpers.h"

using namespace kiln;
using testing::error_text;
using testing::has;

TEST_CASE("no CUDA device: queries answer, tensors on cuda:N raise DeviceError naming the op") {
  if (cuda::is_available()) return;
  CHECK(cuda::device_count() == 0);
  CHECK_FALSE(cuda::unavailable_reason().empty());
  const Device gpu("cuda:0");
  std::string to = error_text<DeviceError>([] { (void)ones({2}).to(Device("cuda:0")); });
  CHECK(has(to, "to"));
  CHECK((has(to, "no CUDA device") || has(to, "without CUDA")));
  CHECK(has(error_text<DeviceError>([] { (void)ones({2}).cuda(); }), "to"));
  CHECK(has(error_text<DeviceError>([&] { (void)empty({2}, TensorOptions(kFloat32, gpu)); }), "empty"));
  CHECK(has(error_text<DeviceError>([&] { (void)zeros({2}, TensorOptions(kFloat32, gpu)); }), "zeros"));
  CHECK(has(error_text<DeviceError>([&] { (void)arange(3, TensorOptions(kInt64, gpu)); }), "arange"));
  CHECK(has(error_text<DeviceError>([&] { (void)eye(2, TensorOptions(kFloat32, gpu)); }), "eye"));
  CHECK_THROWS_AS((void)randn({2}, TensorOptions(kFloat32, gpu)), DeviceError);
  CHECK_THROWS_AS((void)empty({2}, TensorOptions(kFloat32, Device("cuda:3"))), DeviceError);
}

TEST_CASE("no CUDA device: the runtime API raises DeviceError instead of touching a device") {
  if (cuda::is_available()) return;
  CHECK(has(error_text<DeviceError>([] { (void)cuda::current_stream(); }), "cuda::"));
  CHECK_THROWS_AS(cuda::synchronize(), DeviceError);
  CHECK_THROWS_AS((void)cuda::stream_from_pool(), DeviceError);
  CHECK_THROWS_AS(cuda::Graph(), DeviceError);
  CHECK_THROWS_AS((void)cuda::graph_pool_handle(), DeviceError);
  CHECK_THROWS_AS((void)cuda::memory_stats(), DeviceError);
  CHECK_THROWS_AS((void)cuda::pin_memory(ones({2})), DeviceError);
  CHECK_FALSE(cuda::is_pinned(ones({2})));
  CHECK_NOTHROW(cuda::empty_cache());
}
