// Without a CUDA device (every machine kiln is developed on) — or without the CUDA backend —
// asking for one gives a kiln::DeviceError that names the call and says why; nothing crashes.
// On a machine with a device these checks do not apply and the test returns early.
#include <doctest/doctest.h>

#include "kiln/cuda.h"
#include "support/test_helpers.h"

using namespace kiln;
using testing::error_text;
using testing::has;

namespace {
// Names the op and says why: no device (CUDA build) or no backend (build without CUDA).
template <typename Fn>
void refused(const char* op, Fn&& f) {
  std::string msg = error_text<DeviceError>(f);
  INFO(msg);
  CHECK(has(msg, op));
  CHECK((has(msg, "no CUDA device") || has(msg, "without CUDA")));
}
}  // namespace

TEST_CASE("no CUDA device: queries answer, tensors on cuda:N raise DeviceError naming the op") {
  if (cuda::is_available()) return;
  CHECK(cuda::device_count() == 0);
  CHECK_FALSE(cuda::unavailable_reason().empty());
  const Device gpu("cuda:0");
  refused("to", [] { (void)ones({2}).to("cuda"); });
  refused("to", [] { (void)ones({2}).to(Device("cuda:0")); });
  refused("to", [] { (void)ones({2}).cuda(); });
  refused("empty", [] { (void)empty({2}, TensorOptions().with_device("cuda")); });
  refused("zeros", [&] { (void)zeros({2}, TensorOptions(kFloat32, gpu)); });
  CHECK(has(error_text<DeviceError>([&] { (void)arange(3, TensorOptions(kInt64, gpu)); }), "arange"));
  CHECK(has(error_text<DeviceError>([&] { (void)eye(2, TensorOptions(kFloat32, gpu)); }), "eye"));
  CHECK_THROWS_AS((void)randn({2}, TensorOptions(kFloat32, gpu)), DeviceError);
  CHECK_THROWS_AS((void)randint(0, 5, {2}, TensorOptions(kInt64, gpu)), DeviceError);
  CHECK_THROWS_AS((void)randperm(5, TensorOptions(kInt64, gpu)), DeviceError);
  CHECK_THROWS_AS((void)empty({2}, TensorOptions(kFloat32, Device("cuda:3"))), DeviceError);
}

TEST_CASE("no CUDA device: the runtime API raises DeviceError instead of touching a device") {
  if (cuda::is_available()) return;
  refused("cuda::current_device", [] { (void)cuda::current_device(); });
  refused("cuda::set_device", [] { cuda::set_device(0); });
  refused("cuda::DeviceGuard", [] { cuda::DeviceGuard g(0); });
  refused("cuda::current_stream", [] { (void)cuda::current_stream(); });
  refused("cuda::default_stream", [] { (void)cuda::default_stream(); });
  refused("cuda::stream_from_pool", [] { (void)cuda::stream_from_pool(); });
  refused("cuda::stream_count", [] { (void)cuda::stream_count(); });
  refused("cuda::synchronize", [] { cuda::synchronize(); });
  refused("cuda::Stream::synchronize", [] { cuda::Stream().synchronize(); });
  refused("cuda::Stream::query", [] { (void)cuda::Stream().query(); });
  refused("cuda::set_current_stream", [] { cuda::set_current_stream(cuda::Stream()); });
  refused("cuda::StreamGuard", [] { cuda::StreamGuard g{cuda::Stream()}; });
  refused("cuda::Event", [] {
    cuda::Event e;
    e.record(cuda::Stream());
  });
  refused("cuda::Graph", [] { cuda::Graph g; });
  refused("cuda::graph_pool_handle", [] { (void)cuda::graph_pool_handle(); });
  refused("cuda::make_graphed_callable", [] {
    (void)cuda::make_graphed_callable([](const std::vector<Tensor>& in) { return in; }, {ones({2})});
  });
  refused("cuda::make_graphed_callable", [] {
    (void)cuda::make_graphed_callable([](const std::vector<Tensor>& in) { return in; }, {ones({2})}, /*warmup=*/1);
  });
  refused("cuda::memory_stats", [] { (void)cuda::memory_stats(); });
  refused("cuda::reset_peak_memory_stats", [] { cuda::reset_peak_memory_stats(); });
  refused("cuda::pin_memory", [] { (void)cuda::pin_memory(ones({2})); });
  CHECK_THROWS_AS(cuda::record_stream(ones({2}), cuda::Stream()), DeviceError);
  CHECK_FALSE(cuda::is_pinned(ones({2})));
  CHECK_NOTHROW(cuda::empty_cache());
}
