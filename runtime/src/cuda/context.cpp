// Devices: whether there are any (asked once, never fatal without a driver), the current
// device and its guard, error translation, per-device attributes, the TF32 switch.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>
#include "kiln/cuda/context.h"

namespace kiln::cuda {
namespace {

struct DeviceCensus {
  int count = 0;
  std::string reason;  // why count == 0
};

// cudaGetDeviceCount without a driver returns an error (cudaErrorNoDevice,
// cudaErrorInsufficientDriver...) and leaves that error sticky for cudaGetLastError: cleared here.
const DeviceCensus& census() {
  static const DeviceCensus c = [] {
    DeviceCensus d;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      d.reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
      (void)cudaGetLastError();
      return d;
    }
    d.count = n;
    if (n == 0) d.reason = "the driver reports no CUDA device";
    return d;
  }();
  return c;
}

std::atomic<bool> g_allow_tf32{false};
std::atomic<bool> g_cudnn_enabled{true};
std::atomic<bool> g_cudnn_benchmark{false};

}  // namespace

bool is_built() { return true; }
bool is_available() { return census().count > 0; }
int device_count() { return census().count; }
std::string unavailable_reason() { return census().reason; }

int current_device() {
  detail::check_device(0, "cuda::current_device");
  int d = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&d), "cuda::current_device", "");
  return d;
}

void set_device(int index) {
  detail::check_device(index, "cuda::set_device");
  KILN_CUDA_CHECK(cudaSetDevice(index), "cuda::set_device", "index");
}

DeviceGuard::DeviceGuard(int index) {
  detail::check_device(index, "cuda::DeviceGuard");
  int current = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&current), "cuda::DeviceGuard", "index");
  if (current != index) {
    KILN_CUDA_CHECK(cudaSetDevice(index), "cuda::DeviceGuard", "index");
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);  // destructors do not throw
}

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }
void set_cudnn_enabled(bool enabled) { g_cudnn_enabled.store(enabled, std::memory_order_relaxed); }
bool cudnn_enabled() { return g_cudnn_enabled.load(std::memory_order_relaxed); }
void set_cudnn_benchmark(bool benchmark) { g_cudnn_benchmark.store(benchmark, std::memory_order_relaxed); }
bool cudnn_benchmark() { return g_cudnn_benchmark.load(std::memory_order_relaxed); }

namespace detail {

void throw_cuda_error(cudaError_t e, const char* op, const char* arg, const char* what) {
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  KILN_FAIL(DeviceError, op, arg, "CUDA error ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ") in ", what);
}

void check_device(int index, const char* op) {
  const DeviceCensus& c = census();
  KILN_CHECK(c.count > 0, DeviceError, op, "device", "no CUDA device is available (", c.reason, ")");
  KILN_CHECK(index >= 0 && index < c.count, DeviceError, op, "device", "cuda:", index, " is out of range: ",
             c.count, " CUDA device(s)");
}

int sm_count(int device) {
  check_device(device, "cuda::sm_count");
  static std::mutex mu;
  static std::vector<int> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (cache.empty()) cache.assign(size_t(std::max(device_count(), 1)), 0);
  int& slot = cache.at(size_t(device));
  if (slot == 0)
    KILN_CUDA_CHECK(cudaDeviceGetAttribute(&slot, cudaDevAttrMultiProcessorCount, device), "cuda", "device");
  return slot;
}

}  // namespace detail
}  // namespace kiln::cuda
