// kiln's allocator for CUDA devices: the block cache (runtime/src/device_cache/) over cudaMalloc,
// cudaFree and events, allocating on the current device's current stream.
#include "cuda/capture_mode.h"
#include "kiln/cuda/context.h"
#include "device_cache/block_cache.h"

namespace kiln::cuda {
namespace {

class CudaMemory final : public device_cache::DeviceMemoryApi {
 public:
  void* malloc(int device, size_t bytes) override {
    DeviceGuard guard(device);
    void* p = nullptr;
    cudaError_t e;
    {
      detail::RelaxedCaptureScope relaxed;  // a capture in progress stays valid
      e = cudaMalloc(&p, bytes);
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    KILN_CUDA_CHECK(e, "cuda_allocator", "nbytes");
    return p;
  }
  void free(int device, void* p) override {
    DeviceGuard guard(device);
    KILN_CUDA_CHECK(cudaFree(p), "cuda_allocator", "ptr");
  }
  device_cache::EventId record_event(int device, device_cache::StreamId stream) override {
    DeviceGuard guard(device);
    cudaEvent_t e;
    KILN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cuda::record_stream", "");
    KILN_CUDA_CHECK(cudaEventRecord(e, static_cast<cudaStream_t>(stream)), "cuda::record_stream", "stream");
    return e;
  }
  bool event_done(device_cache::EventId e) override {
    cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (r == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    KILN_CUDA_CHECK(r, "cuda_allocator", "event");
    return true;
  }
  void destroy_event(device_cache::EventId e) override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
};

class CudaAllocator final : public Allocator {
 public:
  CudaAllocator() : cache_(memory_) {}
  // StorageImpl makes the tensor's device current before calling (runtime/src/storage.cpp).
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    int device = 0;
    KILN_CUDA_CHECK(cudaGetDevice(&device), "cuda_allocator", "device");
    return cache_.allocate(device, nbytes, detail::current_cuda_stream(device), "cuda_allocator");
  }
  void deallocate(void* p, size_t) override { cache_.free(p); }
  device_cache::BlockCache& cache() { return cache_; }

 private:
  CudaMemory memory_;
  device_cache::BlockCache cache_;
};

// -1: the current device; checked under the caller's name.
int resolve(int device, const char* op) {
  detail::check_device(device < 0 ? 0 : device, op);
  return device < 0 ? current_device() : device;
}

}  // namespace

namespace detail {
// Never destroyed: tensors in static objects may be freed after static destructors ran.
Allocator* device_allocator() {
  static CudaAllocator* a = new CudaAllocator();
  return a;
}
device_cache::BlockCache& block_cache() { return static_cast<CudaAllocator*>(device_allocator())->cache(); }
}  // namespace detail

MemoryStats memory_stats(int device) {
  device = resolve(device, "cuda::memory_stats");
  device_cache::CacheStats s = detail::block_cache().stats(device);
  MemoryStats m;
  m.allocated_bytes = s.allocated_bytes;
  m.reserved_bytes = s.reserved_bytes;
  m.peak_allocated_bytes = s.peak_allocated_bytes;
  m.num_device_mallocs = s.num_device_mallocs;
  m.num_device_frees = s.num_device_frees;
  m.num_cache_hits = s.num_cache_hits;
  return m;
}

void reset_peak_memory_stats(int device) {
  device = resolve(device, "cuda::reset_peak_memory_stats");
  detail::block_cache().reset_peak(device);
}

void empty_cache() {
  if (is_available()) detail::block_cache().empty_cache();
}

void record_stream(const TensorBase& t, const Stream& s) {
  KILN_CHECK(t.defined() && t.is_cuda(), DeviceError, "cuda::record_stream", "t", "expected a CUDA tensor");
  KILN_CHECK(t.device().index == s.device_index(), DeviceError, "cuda::record_stream", "s", "stream of cuda:",
             s.device_index(), " for a tensor on ", t.device().str());
  detail::block_cache().record_stream(t.storage()->data(), s.handle());
}

}  // namespace kiln::cuda
