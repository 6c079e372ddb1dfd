// Streams and events. Each device has a fixed pool of non-blocking streams per priority,
// created on first use and handed out round robin (streams are never destroyed, so a Stream
// value stays valid); each thread has its own current stream per device, the legacy default
// stream until set.
#include <algorithm>
#include <array>
#include <functional>
#include <atomic>
#include <mutex>
#include <vector>
#include "kiln/cuda/context.h"

namespace kiln::cuda {
namespace {

constexpr int kStreamsPerPriority = 8;

struct DevicePool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPriority> low{}, high{};
  std::atomic<uint32_t> next_low{0}, next_high{0};
  std::atomic<int> handed_out{0};
};

DevicePool& pool(int device) {
  static std::vector<DevicePool> pools(size_t(std::max(device_count(), 1)));
  return pools.at(size_t(device));
}

void create_pool(int device, DevicePool& p) {
  DeviceGuard guard(device);
  int least = 0, greatest = 0;  // numerically greatest priority is the lowest
  KILN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cuda::stream_from_pool", "device");
  for (int i = 0; i < kStreamsPerPriority; ++i) {
    KILN_CUDA_CHECK(cudaStreamCreateWithPriority(&p.low[size_t(i)], cudaStreamNonBlocking, least),
                    "cuda::stream_from_pool", "device");
    KILN_CUDA_CHECK(cudaStreamCreateWithPriority(&p.high[size_t(i)], cudaStreamNonBlocking, greatest),
                    "cuda::stream_from_pool", "device");
  }
}

int resolve(int device, const char* op) {
  detail::check_device(device < 0 ? 0 : device, op);  // the error names the caller
  return device < 0 ? current_device() : device;
}

constexpr int kMaxDevices = 64;
thread_local Stream t_current[kMaxDevices];  // default-constructed: legacy default stream
thread_local bool t_set[kMaxDevices] = {};

}  // namespace

bool Stream::query() const {
  detail::check_device(device_, "cuda::Stream::query");
  DeviceGuard guard(device_);
  cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(handle_));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  KILN_CUDA_CHECK(e, "cuda::Stream::query", "");
  return true;
}

void Stream::synchronize() const {
  detail::check_device(device_, "cuda::Stream::synchronize");
  DeviceGuard guard(device_);
  KILN_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)), "cuda::Stream::synchronize", "");
}

Stream default_stream(int device) {
  device = resolve(device, "cuda::default_stream");
  return Stream(device, nullptr, -1);
}

Stream current_stream(int device) {
  device = resolve(device, "cuda::current_stream");
  KILN_CHECK(device < kMaxDevices, DeviceError, "cuda::current_stream", "device", "more than ", kMaxDevices,
             " devices");
  return t_set[device] ? t_current[device] : Stream(device, nullptr, -1);
}

void set_current_stream(const Stream& s) {
  detail::check_device(s.device_index(), "cuda::set_current_stream");
  KILN_CHECK(s.device_index() < kMaxDevices, DeviceError, "cuda::set_current_stream", "s", "more than ",
             kMaxDevices, " devices");
  t_current[s.device_index()] = s;
  t_set[s.device_index()] = true;
}

Stream stream_from_pool(int device, bool high_priority) {
  device = resolve(device, "cuda::stream_from_pool");
  DevicePool& p = pool(device);
  std::call_once(p.created, create_pool, device, std::ref(p));
  p.handed_out.fetch_add(1, std::memory_order_relaxed);
  uint32_t i = (high_priority ? p.next_high : p.next_low).fetch_add(1) % kStreamsPerPriority;
  cudaStream_t h = (high_priority ? p.high : p.low)[i];
  return Stream(device, h, int(i) + (high_priority ? kStreamsPerPriority : 0));
}

int stream_count(int device) {
  device = resolve(device, "cuda::stream_count");
  // 1 for the default stream, plus the pool once it exists.
  return 1 + (pool(device).handed_out.load(std::memory_order_relaxed) > 0 ? 2 * kStreamsPerPriority : 0);
}

void synchronize(int device) {
  device = resolve(device, "cuda::synchronize");
  DeviceGuard guard(device);
  KILN_CUDA_CHECK(cudaDeviceSynchronize(), "cuda::synchronize", "device");
}

StreamGuard::StreamGuard(const Stream& s)
    : previous_((detail::check_device(s.device_index(), "cuda::StreamGuard"), current_stream(s.device_index()))) {
  int dev = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&dev), "cuda::StreamGuard", "");
  set_current_stream(s);
  if (dev != s.device_index()) {
    cudaError_t e = cudaSetDevice(s.device_index());
    if (e != cudaSuccess) {  // the destructor will not run: undo the stream here
      t_current[s.device_index()] = previous_;
      detail::throw_cuda_error(e, "cuda::StreamGuard", "stream", "cudaSetDevice");
    }
  }
  previous_device_ = dev;
}

StreamGuard::~StreamGuard() {
  t_current[previous_.device_index()] = previous_;
  if (previous_device_ >= 0) (void)cudaSetDevice(previous_device_);
}

Event::Event(bool enable_timing) : timing_(enable_timing) {}

Event::~Event() {
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
}

void Event::record(const Stream& s) {
  detail::check_device(s.device_index(), "cuda::Event::record");
  DeviceGuard guard(s.device_index());
  if (!handle_) {
    cudaEvent_t e;
    KILN_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming),
                    "cuda::Event::record", "");
    handle_ = e;
    device_ = s.device_index();
  }
  KILN_CHECK(device_ == s.device_index(), DeviceError, "cuda::Event::record", "stream", "event of cuda:", device_,
             " recorded on a stream of cuda:", s.device_index());
  KILN_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(handle_), static_cast<cudaStream_t>(s.handle())),
                  "cuda::Event::record", "stream");
}

void Event::block(const Stream& s) {
  detail::check_device(s.device_index(), "cuda::Event::block");
  if (!handle_) return;  // never recorded: nothing to wait for
  DeviceGuard guard(s.device_index());
  KILN_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(s.handle()), static_cast<cudaEvent_t>(handle_), 0),
                  "cuda::Event::block", "stream");
}

bool Event::query() const {
  if (!handle_) return true;
  cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(handle_));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  KILN_CUDA_CHECK(e, "cuda::Event::query", "");
  return true;
}

void Event::synchronize() const {
  if (handle_) KILN_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)), "cuda::Event::synchronize", "");
}

float Event::elapsed_ms(const Event& end) const {
  KILN_CHECK(timing_ && end.timing_, ValueError, "cuda::Event::elapsed_ms", "end",
             "both events must be created with enable_timing=true");
  KILN_CHECK(handle_ && end.handle_, ValueError, "cuda::Event::elapsed_ms", "end", "both events must be recorded");
  float ms = 0;
  KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(handle_), static_cast<cudaEvent_t>(end.handle_)),
                  "cuda::Event::elapsed_ms", "end");
  return ms;
}

namespace detail {
cudaStream_t current_cuda_stream(int device) {
  return static_cast<cudaStream_t>(current_stream(device).handle());
}
}  // namespace detail

}  // namespace kiln::cuda
