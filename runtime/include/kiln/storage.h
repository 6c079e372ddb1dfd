#ifndef KILN_RUNTIME_INCLUDE_KILN_STORAGE_H_
#define KILN_RUNTIME_INCLUDE_KILN_STORAGE_H_
// Raw memory of one device, shared by every view of it, with the version counter
// autograd uses to detect in-place modification of saved tensors.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include "kiln/device.h"
#include "kiln/intrusive_ptr.h"

namespace kiln {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;  // throws kiln::Error on failure
  virtual void deallocate(void* p, size_t nbytes) = 0;
};

struct AllocatorStats {
  int64_t live_bytes = 0, peak_bytes = 0, cached_bytes = 0;
  int64_t allocations = 0;        // calls to allocate()
  int64_t system_allocations = 0; // allocations that reached the system allocator
};

// CPU allocator: 64-byte aligned, caches freed blocks by size class so large outputs reuse pages.
Allocator* cpu_allocator();
AllocatorStats cpu_allocator_stats();
void cpu_allocator_empty_cache();
// Allocator of a device type; registered by the backend (CUDA registers its own).
Allocator* allocator_for(Device d);
void register_allocator(DeviceType t, Allocator* a);

class StorageImpl : public RefCounted {
 public:
  StorageImpl(size_t nbytes, Device device);                          // allocates
  StorageImpl(void* data, size_t nbytes, Device device, void (*deleter)(void*, size_t));  // adopts
  ~StorageImpl() override;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  // Memory of inference tensors (allocated under kiln::InferenceMode) has no version to keep:
  // such tensors can never be saved for backward, so in-place writes leave the counter alone.
  void bump_version() {
    if (!inference_) version_.fetch_add(1, std::memory_order_relaxed);
  }
  bool is_inference() const { return inference_; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  void (*deleter_)(void*, size_t) = nullptr;
  std::atomic<uint32_t> version_{0};
  bool inference_ = false;  // allocated (or adopted) under kiln::InferenceMode
};
using Storage = Ref<StorageImpl>;

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_STORAGE_H_
