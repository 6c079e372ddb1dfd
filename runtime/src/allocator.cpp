// CPU caching allocator and the per-device-type allocator registry.
//
// Freed blocks are kept in size classes and handed out again, so a training loop that
// allocates the same shapes every step stops calling malloc (and stops page-faulting
// fresh pages for large outputs) after the first step.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include "core/allocator_registry.h"
#ifdef KILN_WITH_CUDA
#include "kiln/cuda/context.h"
#endif
#include "kiln/cpu_memory.h"
#include "kiln/error.h"
#include "kiln/macros.h"

namespace kiln {
namespace {

constexpr size_t kAlignment = 64;           // cache line; also enough for any SIMD load
constexpr size_t kSmallLimit = 4096;        // up to here: classes every 64 bytes
constexpr int kSmallClasses = int(kSmallLimit / kAlignment);
constexpr int kSubClasses = 4;              // above: 4 classes per power of two (waste <= 25%)
constexpr int kNumClasses = kSmallClasses + 64 * kSubClasses;
// Cached bytes beyond this go back to the system: the cache is for reuse, not hoarding.
constexpr int64_t kMaxCachedBytes = int64_t(1) << 30;

// The critical sections are a few loads and stores: a spin lock costs a fraction of a
// pthread mutex there. It yields after a short spin so a preempted holder can finish.
class SpinLock {
 public:
  void lock() {
    for (int spins = 0; flag_.exchange(true, std::memory_order_acquire); ++spins) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins > 64) {
          std::this_thread::yield();
          spins = 0;
        }
      }
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

int floor_log2(size_t n) { return 63 - __builtin_clzll(n); }

// Blocks of at least one huge page are aligned to it and marked for transparent huge pages
// (Linux's default THP mode is "madvise"): a 64 MB tensor then needs 32 TLB entries instead
// of 16384, which is what makes walking it across rows (a transposed operand) and its first
// touch fast. PyTorch does the same for large CPU allocations.
constexpr size_t kHugePage = size_t(2) << 20;

void* system_alloc(size_t bytes) {
  if (bytes < kHugePage) return std::aligned_alloc(kAlignment, bytes);
  void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) madvise(p, (bytes + kHugePage - 1) / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

// Size class of a request: its index and the block size every member of the class gets.
struct SizeClass { int index; size_t bytes; };
SizeClass size_class(size_t n) {
  if (n <= kSmallLimit) {
    size_t blocks = (n + kAlignment - 1) / kAlignment;
    if (blocks == 0) blocks = 1;
    return {int(blocks) - 1, blocks * kAlignment};
  }
  int lg = floor_log2(n);
  size_t step = (size_t(1) << lg) / kSubClasses;
  size_t rounded = (n + step - 1) / step * step;  // in (2^lg, 2^(lg+1)]
  int sub = int(rounded / step) - kSubClasses - 1;  // 0..3 for 2^lg + step .. 2^(lg+1)
  if (sub < 0) sub = kSubClasses - 1, --lg;         // exactly 2^lg: the top class of the lower octave
  return {kSmallClasses + (lg - 12) * kSubClasses + sub, rounded};
}

class CpuCachingAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) {
      std::lock_guard<SpinLock> lock(mu_);
      ++stats_.allocations;
      return nullptr;
    }
    SizeClass c = size_class(nbytes);
    {
      std::lock_guard<SpinLock> lock(mu_);
      ++stats_.allocations;
      std::vector<void*>& bin = bins_[c.index];
      if (!bin.empty()) {
        void* p = bin.back();
        bin.pop_back();
        stats_.cached_bytes -= int64_t(c.bytes);
        note_live(int64_t(c.bytes));
        return p;
      }
      ++stats_.system_allocations;
      note_live(int64_t(c.bytes));
    }
    void* p = system_alloc(c.bytes);
    if (!p) {
      // drop the cache and try once more before giving up
      empty_cache();
      p = system_alloc(c.bytes);
    }
    if (!p) {
      std::lock_guard<SpinLock> lock(mu_);
      stats_.live_bytes -= int64_t(c.bytes);
      KILN_FAIL(DeviceError, "cpu_allocator", "nbytes", "out of memory: could not allocate ", nbytes, " bytes");
    }
    return p;
  }

  void deallocate(void* p, size_t nbytes) override {
    if (!p) return;
    SizeClass c = size_class(nbytes);
    {
      std::lock_guard<SpinLock> lock(mu_);
      stats_.live_bytes -= int64_t(c.bytes);
      if (stats_.cached_bytes + int64_t(c.bytes) <= kMaxCachedBytes) {
        bins_[c.index].push_back(p);
        stats_.cached_bytes += int64_t(c.bytes);
        return;
      }
    }
    std::free(p);
  }

  AllocatorStats stats() {
    std::lock_guard<SpinLock> lock(mu_);
    return stats_;
  }

  void reset_peak() {
    std::lock_guard<SpinLock> lock(mu_);
    stats_.peak_bytes = stats_.live_bytes;
  }

  void empty_cache() {
    std::vector<void*> to_free;
    {
      std::lock_guard<SpinLock> lock(mu_);
      for (auto& bin : bins_) {
        to_free.insert(to_free.end(), bin.begin(), bin.end());
        bin.clear();
      }
      stats_.cached_bytes = 0;
    }
    for (void* p : to_free) std::free(p);
  }

 private:
  void note_live(int64_t bytes) {
    stats_.live_bytes += bytes;
    if (stats_.live_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.live_bytes;
  }

  SpinLock mu_;
  std::vector<void*> bins_[kNumClasses];
  AllocatorStats stats_;
};

// Never destroyed: tensors held in static objects may be freed after static destructors run.
CpuCachingAllocator& cpu_caching_allocator() {
  static CpuCachingAllocator* instance = new CpuCachingAllocator();
  return *instance;
}

std::atomic<Allocator*>& registry_slot(DeviceType t) {
  static std::atomic<Allocator*> slots[kNumDeviceTypes] = {};
  return slots[int(t)];
}

}  // namespace

Allocator* cpu_allocator() { return &cpu_caching_allocator(); }
AllocatorStats cpu_allocator_stats() { return cpu_caching_allocator().stats(); }
void cpu_allocator_empty_cache() { cpu_caching_allocator().empty_cache(); }
void cpu_allocator_reset_peak_stats() { cpu_caching_allocator().reset_peak(); }

void register_allocator(DeviceType t, Allocator* a) {
  KILN_CHECK(int(t) >= 0 && int(t) < kNumDeviceTypes, ValueError, "register_allocator", "device",
             "unknown device type ", int(t));
  registry_slot(t).store(a, std::memory_order_release);
}

namespace detail {
Allocator* allocator_for_op(Device d, const char* op) {
  Allocator* a = registry_slot(d.type).load(std::memory_order_acquire);
  if (KILN_LIKELY(a)) return a;
  if (d.type == DeviceType::CPU) return cpu_allocator();  // the default unless a test registered another
  KILN_CHECK(d.type == DeviceType::CUDA, DeviceError, op, "device", "no allocator for device ", d.str(),
             ": no out-of-tree backend registered one (kiln/backend_registry.h)");
#ifdef KILN_WITH_CUDA
  cuda::detail::check_device(d.index, op);  // no device, or cuda:N out of range: DeviceError naming op
  return cuda::detail::device_allocator();
#else
  KILN_FAIL(DeviceError, op, "device", "no allocator for device ", d.str(), " (kiln was built without CUDA)");
#endif
}
}  // namespace detail

Allocator* allocator_for(Device d) { return detail::allocator_for_op(d, "allocator_for"); }

}  // namespace kiln
