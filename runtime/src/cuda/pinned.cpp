// Page-locked host memory for fast and asynchronous transfers, cached by size class like device
// blocks (cudaHostAlloc is slow: it maps the pages for the device).
#include <map>
#include <mutex>
#include <vector>
#include "runtime/src/cuda/cuda_context.h"
#include "runtime/src/core/pooled.h"
#include "runtime/src/device_cache/block_cache.h"

namespace kiln::cuda {
namespace {

struct PinnedCache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free;  // by size class
  std::map<void*, size_t> sizes;              // every pinned block
};

PinnedCache& pinned() {
  static PinnedCache* c = new PinnedCache();  // never destroyed, as the device cache
  return *c;
}

void* pinned_alloc(size_t nbytes) {
  const size_t size = device_cache::size_class_bytes(nbytes);
  PinnedCache& c = pinned();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<void*>& list = c.free[size];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      return p;
    }
  }
  void* p = nullptr;
  KILN_CUDA_CHECK(cudaHostAlloc(&p, size, cudaHostAllocDefault), "cuda::pin_memory", "t");
  std::lock_guard<std::mutex> lock(c.mu);
  c.sizes[p] = size;
  return p;
}

void pinned_free(void* p, size_t) {
  PinnedCache& c = pinned();
  std::lock_guard<std::mutex> lock(c.mu);
  c.free[c.sizes.at(p)].push_back(p);
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

bool is_pinned(const Tensor& t) {
  if (!t.defined() || !t.is_cpu() || !is_available()) return false;
  PinnedCache& c = pinned();
  std::lock_guard<std::mutex> lock(c.mu);
  void* base = t.storage()->data();
  return base && c.sizes.count(base) > 0;
}

}  // namespace kiln::cuda
