#ifndef KILN_RUNTIME_INCLUDE_KILN_CUDA_DEVICE_H_
#define KILN_RUNTIME_INCLUDE_KILN_CUDA_DEVICE_H_
// kiln::cuda over TensorBase: devices, streams, events, the caching allocator's statistics,
// record_stream, is_pinned, TF32 and CUDA graphs. kiln/cuda.h adds what returns or runs Tensors
// (pin_memory, graphed callables); the CUDA kernels include only this one. The header is the same
// with and without the CUDA backend; a build without it answers is_available() == false and
// every other call raises kiln::DeviceError saying kiln was built without CUDA. No CUDA header
// is included here: handles are void*.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "kiln/tensor_base.h"

namespace kiln::cuda {

// ---- devices ----
bool is_built();                   // compiled with the CUDA backend
bool is_available();               // built, a driver, and at least one device
int device_count();                // 0 without a device (never throws)
std::string unavailable_reason();  // why is_available() is false ("" when it is true)
int current_device();
void set_device(int index);

// Makes `index` the current device for its scope, restoring the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// ---- streams and events ----
class Stream {
 public:
  Stream() = default;
  Stream(int device, void* handle, int pool_id) : device_(device), pool_id_(pool_id), handle_(handle) {}
  int device_index() const { return device_; }
  Device device() const { return Device(DeviceType::CUDA, device_); }
  void* handle() const { return handle_; }  // cudaStream_t; nullptr is the legacy default stream
  int pool_id() const { return pool_id_; }  // -1 for the default stream
  bool query() const;                       // all work done
  void synchronize() const;
  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  int device_ = 0;
  int pool_id_ = -1;
  void* handle_ = nullptr;
};

Stream default_stream(int device = -1);  // -1: the current device
Stream current_stream(int device = -1);  // this thread's current stream of the device
void set_current_stream(const Stream& s);
// Next stream of the device's pool (round robin over a fixed set, created on first use).
Stream stream_from_pool(int device = -1, bool high_priority = false);
int stream_count(int device = -1);  // streams kiln runs on: the default one, plus the pool's 16 once used
void synchronize(int device = -1);  // waits for all work on the device

// Makes `s` current (and its device) for the scope.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  int previous_device_ = -1;
};

class Event {
 public:
  explicit Event(bool enable_timing = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s);
  void record() { record(current_stream()); }
  void block(const Stream& s);  // s waits for this event
  bool query() const;
  void synchronize() const;
  float elapsed_ms(const Event& end) const;

 private:
  void* handle_ = nullptr;  // cudaEvent_t, created lazily on the recorded stream's device
  int device_ = -1;
  bool timing_;
};

// ---- caching allocator ----
struct MemoryStats {
  int64_t allocated_bytes = 0;  // held by live tensors
  int64_t reserved_bytes = 0;   // obtained from cudaMalloc and not yet returned
  int64_t peak_allocated_bytes = 0;
  int64_t num_device_mallocs = 0;  // cudaMalloc calls
  int64_t num_device_frees = 0;    // cudaFree calls
  int64_t num_cache_hits = 0;      // allocations served from the cache
};
MemoryStats memory_stats(int device = -1);
void reset_peak_memory_stats(int device = -1);
void empty_cache();  // returns unused cached blocks (not those a graph's pool keeps) to the driver
// Marks t's memory as used by `s`: its block is reused only after the work queued on s so far.
void record_stream(const TensorBase& t, const Stream& s);
// Whether t is a CPU tensor in page-locked memory (kiln/cuda.h's pin_memory makes one).
bool is_pinned(const TensorBase& t);
// ---- math modes ----
// float32 matmuls on tensor cores in TF32 (10-bit mantissa inputs, float32 accumulation).
// Off by default, as in PyTorch since 1.12.
void set_allow_tf32(bool allow);
bool allow_tf32();
// Convolutions through cuDNN (torch.backends.cudnn): used when the build found cudnn.h
// (KILN_CUDNN=AUTO or ON), libcudnn loads at run time, and it is enabled (the default); else
// kiln's im2col + cuBLAS kernels, which give the same results up to rounding. float32 uses TF32
// tensor cores in cuDNN only with set_allow_tf32(true); with use_deterministic_algorithms on,
// only cuDNN's deterministic algorithms are chosen.
bool cudnn_is_available();  // built with cuDNN and the library loads
int cudnn_version();        // cudnnGetVersion(), e.g. 91900; 0 when not available
void set_cudnn_enabled(bool enabled);
bool cudnn_enabled();
// torch.backends.cudnn.benchmark: the first convolution of each shape times cuDNN's algorithms
// and keeps the fastest (off by default: cuDNN's heuristics choose). Ignored under
// use_deterministic_algorithms (the timing could pick another algorithm in another run) and
// while a stream is being captured.
void set_cudnn_benchmark(bool benchmark);
bool cudnn_benchmark();

// ---- CUDA graphs ----
enum class CaptureMode { Global, ThreadLocal, Relaxed };  // cudaStreamCaptureMode*
enum class CaptureStatus { None, Active, Invalidated };
CaptureStatus capture_status(const Stream& s);
inline CaptureStatus capture_status() { return capture_status(current_stream()); }

// A memory pool for graph captures: every block allocated during a capture into it stays
// reserved for the pool while any graph or handle refers to it, so replays find their
// buffers intact and no one else is handed them. Share one between graphs by passing it.
struct MempoolHandle {
  uint64_t id = 0;                  // 0: "make a new pool"
  std::shared_ptr<void> keepalive;  // holds the pool open
};
MempoolHandle graph_pool_handle();

// Buffers a graph reads are fixed at capture: to change an input between replays, write into
// it (copy_, fill_) — e.g. a 0-d CUDA tensor holding a learning rate, updated before replay().
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // Captures the current stream, which must not be the legacy default stream.
  void capture_begin(const MempoolHandle& pool = {}, CaptureMode mode = CaptureMode::Global);
  void capture_end();
  void replay();
  void upload();  // instantiates and uploads ahead of the first replay
  void reset();   // drops the graph and its hold on the pool
  int64_t replay_count() const;
  bool captured() const;
  MempoolHandle pool() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Begins a capture; ends it at scope exit. When an exception leaves the scope the capture is
// ended and discarded (the stream is usable again) and the exception goes on.
class CaptureGuard {
 public:
  explicit CaptureGuard(Graph& g, const MempoolHandle& pool = {}, CaptureMode mode = CaptureMode::Global);
  ~CaptureGuard() noexcept(false);
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;

 private:
  Graph& graph_;
  int uncaught_ = 0;
};

}  // namespace kiln::cuda
#endif  // KILN_RUNTIME_INCLUDE_KILN_CUDA_DEVICE_H_
