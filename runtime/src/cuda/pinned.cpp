// Page-locked host memory for fast and asynchronous transfers, cached by size class like device
// blocks (cudaHostAlloc is slow: it maps the pages for the device). A freed block may still be
// read by an asynchronous copy: it is reused only after the work queued on the freeing thread's
// current stream when it was freed.
#include <map>
#include <mutex>
#include <utility>
#include <vector>
#include "cuda/capture_mode.h"
#include "kiln/cuda.h"
#include "kiln/cuda/context.h"
#include "core/pooled.h"
#include "device_cache/block_cache.h"

namespace kiln::cuda {
namespace {

struct PinnedCache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free;  // by size class
  std::map<void*, size_t> sizes;              // every pinned block
  std::vector<std::pair<void*, cudaEvent_t>> pending;  // freed, waiting for their event
};

// Moves blocks whose event completed to the free lists (caller holds the lock).
void poll_pending(PinnedCache& c) {
  for (size_t i = 0; i < c.pending.size();) {
    auto [p, e] = c.pending[i];
    cudaError_t r = cudaEventQuery(e);
    if (r == cudaErrorNotReady) {
      (void)cudaGetLastError();
      ++i;
      continue;
    }
    (void)cudaGetLastError();  // an error other than "not ready" is sticky: nothing will run anyway
    (void)cudaEventDestroy(e);
    c.free[c.sizes.at(p)].push_back(p);
    c.pending.erase(c.pending.begin() + std::ptrdiff_t(i));
  }
}

// An event on the current stream of the current device, or nullptr when there is none to take
// (no stream, or a capture underway on it, where an event would join the graph). Never throws:
// called from a deleter.
cudaEvent_t fence_current_stream() {
  try {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return nullptr;
    cudaStream_t s = detail::current_cuda_stream(dev);
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &st) != cudaSuccess || st != cudaStreamCaptureStatusNone) return nullptr;
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) return nullptr;
    if (cudaEventRecord(e, s) != cudaSuccess) {
      (void)cudaEventDestroy(e);
      return nullptr;
    }
    return e;
  } catch (...) {
    return nullptr;
  }
}

PinnedCache& pinned() {
  static PinnedCache* c = new PinnedCache();  // never destroyed, as the device cache
  return *c;
}

void* pinned_alloc(size_t nbytes) {
  const size_t size = device_cache::size_class_bytes(nbytes);
  PinnedCache& c = pinned();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    poll_pending(c);
    std::vector<void*>& list = c.free[size];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      return p;
    }
  }
  void* p = nullptr;
  cudaError_t e;
  {
    detail::RelaxedCaptureScope relaxed;
    e = cudaHostAlloc(&p, size, cudaHostAllocDefault);
  }
  KILN_CUDA_CHECK(e, "cuda::pin_memory", "t");
  std::lock_guard<std::mutex> lock(c.mu);
  c.sizes[p] = size;
  return p;
}

void pinned_free(void* p, size_t) {
  if (!p) return;
  cudaEvent_t fence = fence_current_stream();
  PinnedCache& c = pinned();
  std::lock_guard<std::mutex> lock(c.mu);
  if (fence) c.pending.emplace_back(p, fence);
  else c.free[c.sizes.at(p)].push_back(p);
}

}  // namespace

Tensor pin_memory(const Tensor& t) {
  const char* op = "cuda::pin_memory";
  KILN_CHECK(t.defined(), ValueError, op, "t", "undefined tensor");
  KILN_CHECK(t.is_cpu(), DeviceError, op, "t", "only CPU tensors can be pinned, got one on ", t.device().str());
  detail::check_device(0, op);
  if (is_pinned(t)) return t;
  const size_t nbytes = t.nbytes();
  void* p = nbytes ? pinned_alloc(nbytes) : nullptr;
  Tensor out(kiln::detail::new_tensor_impl(make_ref<StorageImpl>(p, nbytes, kCPU, pinned_free), t.dtype(), t.sizes(),
                                     contiguous_strides(t.sizes()), 0));
  out.copy_(t);
  return out;
}

bool is_pinned(const TensorBase& t) {
  if (!t.defined() || !t.is_cpu() || !is_available()) return false;
  void* base = t.storage()->data();
  if (!base) return false;
  {
    PinnedCache& c = pinned();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.sizes.count(base)) return true;
  }
  // Page-locked by someone else (cudaHostAlloc, cudaHostRegister) and adopted by a tensor.
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, base) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace kiln::cuda
