// The CUDA runtime on a real device (runs only where one is present): device guards, streams and
// events, the caching allocator's statistics and reuse rules, pinned memory, and graphs (capture
// modes, the capture guard, shared pools, device scalars, graphed callables). The allocator's
// rules are also proven on the host with a fake device (tests/test_device_cache.cpp).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/relu.h"

using namespace kiln;
using testing::error_text;
using testing::expect_values;
using testing::has;

namespace {
const Device kCuda("cuda:0");
TensorOptions on_cuda(DType d = kFloat32) { return TensorOptions(d, kCuda); }

// Holds a stream at a host function until open() (or destruction): work queued after it, and
// events recorded after it, are then certainly not done.
class StreamGate {
 public:
  explicit StreamGate(const cuda::Stream& s) : stream_(s) {
    REQUIRE(cudaLaunchHostFunc(static_cast<cudaStream_t>(s.handle()), &StreamGate::wait, this) == cudaSuccess);
  }
  ~StreamGate() {
    open();
    stream_.synchronize();
  }
  void open() { open_.store(true); }

 private:
  static void CUDART_CB wait(void* self) {
    while (!static_cast<StreamGate*>(self)->open_.load()) std::this_thread::yield();
  }
  cuda::Stream stream_;
  std::atomic<bool> open_{false};
};

int64_t device_mallocs() { return cuda::memory_stats().num_device_mallocs; }
}  // namespace

TEST_CASE("runtime: device census, current device and guards") {
  CHECK(cuda::is_built());
  CHECK(cuda::is_available());
  CHECK(cuda::device_count() >= 1);
  CHECK(cuda::unavailable_reason().empty());
  cuda::set_device(0);
  CHECK(cuda::current_device() == 0);
  {
    cuda::DeviceGuard same(0);  // no change
    CHECK(cuda::current_device() == 0);
  }
  if (cuda::device_count() > 1) {
    {
      cuda::DeviceGuard other(1);
      CHECK(cuda::current_device() == 1);
    }
    CHECK(cuda::current_device() == 0);
  }
  const int n = cuda::device_count();
  std::string msg = error_text<DeviceError>([&] { cuda::set_device(n); });
  CHECK(has(msg, "cuda::set_device"));
  CHECK(has(msg, "out of range"));
  CHECK_THROWS_AS(cuda::DeviceGuard{n}, DeviceError);
  CHECK_THROWS_AS((void)empty({2}, TensorOptions(kFloat32, Device(DeviceType::CUDA, n))), DeviceError);
}

TEST_CASE("runtime: an op on another device than the current one runs there and leaves the current one") {
  // kernel_for holds a DeviceGuard over a CUDA kernel: relu and linear on cuda:1 while cuda:0 is
  // current launch on cuda:1's streams (the default one included), not on cuda:0's
  if (cuda::device_count() < 2) return;  // one device: nothing to mix up
  cuda::set_device(0);
  const Device second("cuda:1");
  Tensor x = from_vector<float>({-1, 2, -3, 4}, {2, 2});
  Tensor w = from_vector<float>({1, 0, 0, 1}, {2, 2});
  Tensor y = relu(x.to(second));
  Tensor z = linear(x.to(second), w.to(second));
  CHECK(y.device() == second);
  CHECK(cuda::current_device() == 0);
  expect_values(y.to(kCPU), {2, 2}, {0, 2, 0, 4});
  expect_values(z.to(kCPU), {2, 2}, {-1, 2, -3, 4});
}

TEST_CASE("runtime: the pool hands out 8 streams per priority round robin, the default stream is the null handle") {
  cuda::Stream def = cuda::default_stream();
  CHECK(def.handle() == nullptr);
  CHECK(def.pool_id() == -1);
  CHECK(def.device() == kCuda);
  std::vector<cuda::Stream> low, high;
  for (int i = 0; i < 9; ++i) low.push_back(cuda::stream_from_pool());
  for (int i = 0; i < 9; ++i) high.push_back(cuda::stream_from_pool(0, /*high_priority=*/true));
  for (int i = 0; i < 8; ++i) {
    CHECK(low[size_t(i)].handle() != nullptr);
    for (int j = 0; j < i; ++j) CHECK(low[size_t(i)] != low[size_t(j)]);
    for (int j = 0; j < 8; ++j) CHECK(low[size_t(i)] != high[size_t(j)]);
  }
  CHECK(low[8] == low[0]);  // the ninth wraps around
  CHECK(high[8] == high[0]);
  CHECK(cuda::stream_count() == 17);
  int lo = 0, hi = 0;
  REQUIRE(cudaDeviceGetStreamPriorityRange(&lo, &hi) == cudaSuccess);
  int p_low = 0, p_high = 0;
  REQUIRE(cudaStreamGetPriority(static_cast<cudaStream_t>(low[0].handle()), &p_low) == cudaSuccess);
  REQUIRE(cudaStreamGetPriority(static_cast<cudaStream_t>(high[0].handle()), &p_high) == cudaSuccess);
  CHECK(p_low == lo);
  CHECK(p_high == hi);
  unsigned flags = 0;
  REQUIRE(cudaStreamGetFlags(static_cast<cudaStream_t>(low[0].handle()), &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
}

TEST_CASE("runtime: the current stream is per thread, and StreamGuard restores it") {
  const cuda::Stream before = cuda::current_stream();
  cuda::Stream a = cuda::stream_from_pool(), b = cuda::stream_from_pool();
  {
    cuda::StreamGuard ga(a);
    CHECK(cuda::current_stream() == a);
    {
      cuda::StreamGuard gb(b);
      CHECK(cuda::current_stream() == b);
      cuda::Stream seen;
      std::thread([&] { seen = cuda::current_stream(0); }).join();
      CHECK(seen.handle() == nullptr);  // another thread starts on the default stream
    }
    CHECK(cuda::current_stream() == a);
  }
  CHECK(cuda::current_stream() == before);
  cuda::set_current_stream(a);
  CHECK(cuda::current_stream() == a);
  cuda::set_current_stream(cuda::default_stream());
  CHECK(cuda::current_stream().handle() == nullptr);
}

TEST_CASE("runtime: work on a pool stream, events order streams, query reflects pending work") {
  cuda::Stream side = cuda::stream_from_pool();
  Tensor x = full({1000}, 3.0, on_cuda());  // on this thread's current (default) stream
  cuda::Event filled;
  filled.record();
  filled.block(side);  // side is non-blocking: it must wait for x explicitly
  cuda::Event done;
  CHECK(done.query());  // never recorded: nothing to wait for
  Tensor y;
  {
    StreamGate gate(side);
    cuda::StreamGuard g(side);
    y = x * 2;
    done.record();  // on side, after the gate
    CHECK_FALSE(side.query());
    CHECK_FALSE(done.query());
    done.block(cuda::default_stream());  // the default stream waits for y
    gate.open();
  }
  done.synchronize();
  CHECK(done.query());
  CHECK(side.query());
  expect_values(y.sum().cpu(), {}, {6000});
  cuda::synchronize();
  cuda::default_stream().synchronize();
}

TEST_CASE("runtime: timing events measure elapsed time, events without timing refuse") {
  cuda::Event start(/*enable_timing=*/true), end(/*enable_timing=*/true);
  start.record();
  Tensor x = full({1 << 16}, 1.0, on_cuda());
  for (int i = 0; i < 10; ++i) x = x * 1.0001;
  end.record();
  end.synchronize();
  CHECK(start.elapsed_ms(end) >= 0.0f);
  cuda::Event plain;
  plain.record();
  CHECK(has(error_text<ValueError>([&] { (void)plain.elapsed_ms(end); }), "enable_timing"));
  cuda::Event unrecorded(true);
  CHECK_THROWS_AS((void)start.elapsed_ms(unrecorded), ValueError);
}

TEST_CASE("allocator: statistics count live and reserved bytes, and a steady loop stops calling cudaMalloc") {
  cuda::synchronize();
  cuda::empty_cache();
  cuda::MemoryStats s0 = cuda::memory_stats();
  Tensor a = empty({1000}, on_cuda());  // 4000 bytes: a 4096-byte block
  cuda::MemoryStats s1 = cuda::memory_stats();
  CHECK(s1.allocated_bytes - s0.allocated_bytes == 4096);
  CHECK(s1.reserved_bytes >= s1.allocated_bytes);
  CHECK(s1.peak_allocated_bytes >= s1.allocated_bytes);
  a = Tensor();
  CHECK(cuda::memory_stats().allocated_bytes == s0.allocated_bytes);
  CHECK(cuda::memory_stats().reserved_bytes == s1.reserved_bytes);  // cached, not returned

  Tensor w = full({64, 64}, 0.5, on_cuda());
  int64_t after_first = 0;
  for (int iter = 0; iter < 5; ++iter) {
    Tensor h = relu(w * 2 - 0.25);
    Tensor big = empty({3 << 18}, on_cuda());  // 3 MiB, a large block
    big.fill_(1.0);
    Tensor s = h.sum() + big.sum();
    if (iter == 0) after_first = device_mallocs();
    else CHECK(device_mallocs() == after_first);
  }
  CHECK(cuda::memory_stats().num_cache_hits > s1.num_cache_hits);
}

TEST_CASE("allocator: reset_peak_memory_stats and empty_cache return exactly the unused blocks") {
  cuda::synchronize();
  Tensor keep = empty({1 << 20}, on_cuda());  // 4 MiB, live
  { Tensor gone = empty({5 << 18}, on_cuda()); }  // 5 MiB, cached
  cuda::reset_peak_memory_stats();
  cuda::MemoryStats s = cuda::memory_stats();
  CHECK(s.peak_allocated_bytes == s.allocated_bytes);
  cuda::empty_cache();
  cuda::MemoryStats e = cuda::memory_stats();
  CHECK(e.reserved_bytes == e.allocated_bytes);  // nothing cached outside graph pools (none live here)
  CHECK(e.allocated_bytes == s.allocated_bytes);
  CHECK(e.num_device_frees > s.num_device_frees);
  const int64_t mallocs = e.num_device_mallocs;
  { Tensor again = empty({5 << 18}, on_cuda()); }
  CHECK(cuda::memory_stats().num_device_mallocs == mallocs + 1);  // the 5 MiB block was returned
}

TEST_CASE("allocator: a block recorded on another stream is reused only after that stream's work") {
  cuda::synchronize();
  cuda::Stream side = cuda::stream_from_pool();
  Tensor x = empty({2048}, on_cuda());  // on the default stream
  void* p = x.data_ptr();
  {
    StreamGate gate(side);
    cuda::record_stream(x, side);
    x = Tensor();  // freed while side is held
    Tensor y = empty({2048}, on_cuda());
    CHECK(y.data_ptr() != p);
    gate.open();
  }  // side drained
  Tensor z = empty({2048}, on_cuda());
  Tensor z2 = empty({2048}, on_cuda());
  CHECK((z.data_ptr() == p || z2.data_ptr() == p));
  CHECK(has(error_text<DeviceError>([&] { cuda::record_stream(ones({2}), side); }), "cuda::record_stream"));
}

TEST_CASE("pinned memory: copies of CPU tensors, asynchronous transfers both ways") {
  Tensor h = arange(6, TensorOptions(kFloat32)).reshape({2, 3});
  Tensor p = cuda::pin_memory(h);
  CHECK(cuda::is_pinned(p));
  CHECK_FALSE(cuda::is_pinned(h));
  CHECK(p.is_cpu());
  CHECK(p.data_ptr() != h.data_ptr());
  expect_values(p, {2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK(cuda::pin_memory(p).is_same(p));  // already pinned
  CHECK(cuda::is_pinned(p.slice(1, 1, 3)));  // a view of pinned memory
  Tensor d = p.to(kCuda, /*non_blocking=*/true);
  Tensor back = cuda::pin_memory(zeros({2, 3}));
  back.copy_(d * 10, /*non_blocking=*/true);
  cuda::synchronize();
  expect_values(back, {2, 3}, {0, 10, 20, 30, 40, 50});
  CHECK(has(error_text<DeviceError>([&] { (void)cuda::pin_memory(d); }), "cuda::pin_memory"));
  CHECK_FALSE(cuda::is_pinned(d));
}

TEST_CASE("graphs: capture and replay in each capture mode, a written input changes the replay") {
  for (cuda::CaptureMode mode : {cuda::CaptureMode::Global, cuda::CaptureMode::ThreadLocal, cuda::CaptureMode::Relaxed}) {
    INFO("mode " << int(mode));
    cuda::Stream side = cuda::stream_from_pool();
    cuda::StreamGuard on_side(side);
    Tensor x = full({4}, 1.0, on_cuda());
    (void)(x * 2 + 1);  // warm up outside the capture
    side.synchronize();
    cuda::Graph g;
    CHECK_FALSE(g.captured());
    CHECK(cuda::capture_status() == cuda::CaptureStatus::None);
    g.capture_begin({}, mode);
    CHECK(cuda::capture_status() == cuda::CaptureStatus::Active);
    Tensor y = x * 2 + 1;
    g.capture_end();
    CHECK(cuda::capture_status() == cuda::CaptureStatus::None);
    CHECK(g.captured());
    CHECK(g.replay_count() == 0);
    g.replay();
    expect_values(y.cpu(), {4}, {3, 3, 3, 3});
    x.fill_(5.0);
    g.replay();
    expect_values(y.cpu(), {4}, {11, 11, 11, 11});
    CHECK(g.replay_count() == 2);
    CHECK(g.pool().id != 0);
  }
}

TEST_CASE("graphs: the legacy default stream cannot be captured, misuse is a ValueError") {
  cuda::StreamGuard on_default(cuda::default_stream());
  cuda::Graph g;
  CHECK(has(error_text<ValueError>([&] { g.capture_begin(); }), "legacy default stream"));
  CHECK(has(error_text<ValueError>([&] { g.replay(); }), "cuda::Graph::replay"));
  CHECK_THROWS_AS(g.upload(), ValueError);
  CHECK_THROWS_AS(g.capture_end(), ValueError);
}

TEST_CASE("graphs: upload ahead of the first replay, and reset drops the graph") {
  cuda::Stream side = cuda::stream_from_pool();
  cuda::StreamGuard on_side(side);
  Tensor x = full({8}, 2.0, on_cuda());
  (void)(x * x);
  cuda::Graph g;
  g.capture_begin();
  Tensor y = x * x;
  g.capture_end();
  g.upload();
  g.replay();
  expect_values(y.cpu(), {8}, std::vector<double>(8, 4.0));
  CHECK(g.replay_count() == 1);
  g.reset();
  CHECK_FALSE(g.captured());
  CHECK(g.replay_count() == 0);
  CHECK(g.pool().id == 0);
}

TEST_CASE("graphs: CaptureGuard ends the capture at scope exit and discards it when an exception escapes") {
  cuda::Stream side = cuda::stream_from_pool();
  cuda::StreamGuard on_side(side);
  Tensor x = full({3}, 4.0, on_cuda());
  (void)(x + 1);
  cuda::Graph g;
  Tensor y;
  {
    cuda::CaptureGuard capture(g);
    y = x + 1;
  }
  CHECK(g.captured());
  g.replay();
  expect_values(y.cpu(), {3}, {5, 5, 5});

  cuda::Graph bad;
  bool caught = false;
  try {
    cuda::CaptureGuard capture(bad, {}, cuda::CaptureMode::ThreadLocal);
    Tensor t = x * 3;
    throw std::runtime_error("inside the capture");
  } catch (const std::runtime_error&) {
    caught = true;
  }
  CHECK(caught);
  CHECK_FALSE(bad.captured());
  CHECK(cuda::capture_status(side) == cuda::CaptureStatus::None);
  expect_values((x - 1).cpu(), {3}, {3, 3, 3});  // the stream runs eagerly again
  {
    cuda::CaptureGuard again(bad);  // the discarded graph captures anew
    y = x * 10;
  }
  bad.replay();
  expect_values(y.cpu(), {3}, {40, 40, 40});
}

TEST_CASE("graphs: two graphs share a pool, its buffers go to no one else while it lives") {
  cuda::Stream side = cuda::stream_from_pool();
  cuda::StreamGuard on_side(side);
  Tensor x = full({256}, 1.0, on_cuda());
  (void)((x * 5) + 1);
  cuda::MempoolHandle pool = cuda::graph_pool_handle();
  CHECK(pool.id != 0);
  cuda::Graph g1, g2;
  void* temp_ptr = nullptr;
  Tensor y1, y2;
  g1.capture_begin(pool);
  {
    Tensor temp = x * 5;  // freed inside the capture: back to the pool, not the general cache
    temp_ptr = temp.data_ptr();
    y1 = temp + 1;
  }
  g1.capture_end();
  g2.capture_begin(pool);
  y2 = y1 * 3;
  g2.capture_end();
  CHECK(g1.pool().id == pool.id);
  CHECK(g2.pool().id == pool.id);
  for (int i = 0; i < 3; ++i) {
    Tensor other = empty({256}, on_cuda());  // same size, same stream, outside any capture
    CHECK(other.data_ptr() != temp_ptr);
  }
  x.fill_(2.0);
  g1.replay();
  g2.replay();
  expect_values(y2.cpu(), {256}, std::vector<double>(256, 33.0));
  pool = {};  // the graphs still hold it
  g1.replay();
  expect_values(y1.cpu(), {256}, std::vector<double>(256, 11.0));
}

TEST_CASE("graphs: a device scalar updated before replay changes the replayed result") {
  cuda::Stream side = cuda::stream_from_pool();
  cuda::StreamGuard on_side(side);
  Tensor w = full({3}, 4.0, on_cuda());
  Tensor lr = full({}, 0.5, on_cuda());  // a 0-d CUDA tensor: read by the graph at replay
  (void)(w * lr);
  cuda::Graph g;
  Tensor out;
  {
    cuda::CaptureGuard capture(g);
    out = w * lr;
  }
  g.replay();
  expect_values(out.cpu(), {3}, {2, 2, 2});
  lr.fill_(0.25);
  g.replay();
  expect_values(out.cpu(), {3}, {1, 1, 1});
  lr.copy_(full({}, 2.0, TensorOptions(kFloat32)));
  g.replay();
  expect_values(out.cpu(), {3}, {8, 8, 8});
}

TEST_CASE("graphs: make_graphed_callable returns what the eager function returns") {
  cuda::TensorFunction fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{relu(in[0] * in[1] - 1), (in[0] + in[1]).sum()};
  };
  Tensor a0 = from_vector<float>({1, 2, 3, -4}, {4}).cuda(), b0 = from_vector<float>({1, 1, 1, 1}, {4}).cuda();
  cuda::TensorFunction graphed = cuda::make_graphed_callable(fn, {a0, b0}, /*warmup=*/2);
  for (float scale : {1.0f, -2.0f, 0.5f}) {
    Tensor a = from_vector<float>({scale, 2 * scale, 3, 4}, {4}).cuda();
    Tensor b = from_vector<float>({2, 3, -1, scale}, {4}).cuda();
    std::vector<Tensor> want = fn({a, b});
    std::vector<Tensor> got = graphed({a, b});
    REQUIRE(got.size() == 2);
    expect_values(got[0].cpu(), {4}, want[0].cpu().to_vector<double>());
    expect_values(got[1].cpu(), {}, want[1].cpu().to_vector<double>());
  }
  CHECK(has(error_text<ValueError>([&] { (void)graphed({a0}); }), "cuda::make_graphed_callable"));
  std::string shape = error_text<ValueError>([&] { (void)graphed({a0, full({5}, 1.0, on_cuda())}); });
  CHECK(has(shape, "input 1"));
  CHECK(has(shape, "[4]"));
  CHECK(has(error_text<ValueError>([&] { (void)graphed({a0.to(kFloat64), b0}); }), "input 0"));
  CHECK(has(error_text<ValueError>([&] { (void)graphed({a0, b0.cpu()}); }), "input 1"));
  CHECK_THROWS_AS((void)cuda::make_graphed_callable(fn, {a0.cpu(), b0}), DeviceError);
}

TEST_CASE("graphs: make_graphed_callable captures backward: gradients equal eager ones, call after call") {
  // A linear layer with relu; x and the parameters need gradients, the target does not.
  Tensor w = (arange(12, TensorOptions(kFloat32)).reshape({4, 3}) * 0.1 - 0.5).cuda().requires_grad_(true);
  Tensor b = tensor<float>({0.1f, -0.2f, 0.3f}).cuda().requires_grad_(true);
  cuda::TensorFunction layer = [w, b](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{relu(linear(in[0], w.t(), b)), in[1] * 2};
  };
  Tensor x0 = zeros({2, 4}, on_cuda()).requires_grad_(true), target0 = zeros({2, 3}, on_cuda());
  cuda::GraphedOptions options;
  options.parameters = {w, b};
  cuda::TensorFunction graphed = cuda::make_graphed_callable(layer, {x0, target0}, options);

  Tensor w_eager = w.detach().clone().requires_grad_(true), b_eager = b.detach().clone().requires_grad_(true);
  // The first step fills the parameters' .grad; the second is the first to accumulate into
  // them (old and new gradients alive at once), so the cache is warm from then on.
  int64_t mallocs_after_second_step = 0;
  for (int step = 0; step < 4; ++step) {
    Tensor x_data = (arange(8, TensorOptions(kFloat32)).reshape({2, 4}) * (0.3 * (step + 1)) - 1).cuda();
    Tensor target = full({2, 3}, 0.25 * step, on_cuda());
    Tensor x = x_data.clone().requires_grad_(true);
    std::vector<Tensor> out = graphed({x, target});
    REQUIRE(out.size() == 2);
    CHECK(out[0].requires_grad());
    CHECK_FALSE(out[1].requires_grad());
    ((out[0] - out[1]) * (out[0] - out[1])).sum().backward();

    Tensor x_eager = x_data.clone().requires_grad_(true);
    Tensor y_eager = relu(linear(x_eager, w_eager.t(), b_eager));
    ((y_eager - target * 2) * (y_eager - target * 2)).sum().backward();
    expect_values(out[0].cpu(), {2, 3}, y_eager.detach().cpu().to_vector<double>(), 1e-5);
    expect_values(x.grad().cpu(), {2, 4}, x_eager.grad().cpu().to_vector<double>(), 1e-5);
    expect_values(w.grad().cpu(), {4, 3}, w_eager.grad().cpu().to_vector<double>(), 1e-5);  // accumulated
    expect_values(b.grad().cpu(), {3}, b_eager.grad().cpu().to_vector<double>(), 1e-5);
    if (step == 1) mallocs_after_second_step = device_mallocs();
    else if (step > 1) CHECK(device_mallocs() == mallocs_after_second_step);  // a steady loop
  }

  std::vector<Tensor> stale = graphed({x0, target0});
  Tensor stale_loss = stale[0].sum();
  (void)graphed({x0, target0});
  CHECK(has(error_text<AutogradError>([&] { stale_loss.backward(); }), "cuda::make_graphed_callable"));
  Tensor unused = ones({2}, on_cuda()).requires_grad_(true);
  options.parameters = {w, b, unused};
  CHECK(has(error_text<ValueError>([&] { (void)cuda::make_graphed_callable(layer, {x0, target0}, options); }),
            "parameter 2"));
}
