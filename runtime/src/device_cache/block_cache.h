#ifndef KILN_RUNTIME_SRC_DEVICE_CACHE_BLOCK_CACHE_H_
#define KILN_RUNTIME_SRC_DEVICE_CACHE_BLOCK_CACHE_H_
// The CUDA caching allocator's bookkeeping, with the device behind an interface so the host
// tests drive it with fake memory and fake events (tests/test_device_cache.cpp). Compiled in
// every build; runtime/src/cuda/device_allocator.cpp plugs in cudaMalloc and cudaEvent*.
//
// - Requests are rounded to size classes: small ones (up to 1 MiB) in 512 B steps, large ones
//   in 4 classes per power of two. A freed block is reused only on the stream it was allocated
//   on (work queued there runs in order, so no synchronization is needed).
// - Small requests reuse only a cached block of exactly their class. A large request takes the
//   smallest cached large block that fits, split when more than 1 MiB would be left over; freed
//   neighbours of one device allocation merge again, and only whole allocations go back to the
//   device. Small and large requests never share a block.
// - A block used on other streams (record_stream) is reusable only after events recorded on
//   those streams at free time have completed.
// - While any capture is underway no event is queried or recorded for a free (illegal during
//   capture): such frees wait until the last capture ends. Nothing goes back to the device during
//   a capture either (cudaFree would invalidate it).
// - Graph pools: while a capture into pool P runs on a stream, that stream's allocations come
//   from and return to P; P's blocks are never handed to anyone else while P is retained (by a
//   graph or a handle), and go back to the general cache when the last reference goes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace kiln::device_cache {

using StreamId = void*;  // a cudaStream_t
using EventId = void*;   // a cudaEvent_t

class DeviceMemoryApi {
 public:
  virtual ~DeviceMemoryApi() = default;
  virtual void* malloc(int device, size_t bytes) = 0;  // nullptr when out of memory
  virtual void free(int device, void* p) = 0;
  virtual EventId record_event(int device, StreamId stream) = 0;  // a new event, recorded on stream
  virtual bool event_done(EventId e) = 0;
  virtual void destroy_event(EventId e) = 0;
};

struct CacheStats {
  int64_t allocated_bytes = 0, reserved_bytes = 0, peak_allocated_bytes = 0;
  int64_t num_device_mallocs = 0, num_device_frees = 0, num_cache_hits = 0;
};

size_t size_class_bytes(size_t bytes);  // the rounded size a request of `bytes` gets

class BlockCache {
 public:
  explicit BlockCache(DeviceMemoryApi& api) : api_(api) {}
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Raises kiln::DeviceError naming `op` when the device is out of memory even after the
  // general cache was returned to it.
  void* allocate(int device, size_t bytes, StreamId stream, const char* op);
  void free(void* p);
  void record_stream(void* p, StreamId stream);  // the live block at p (a storage's data()) is used on stream
  void empty_cache();  // unused general-cache blocks back to the device; ValueError during a capture
  CacheStats stats(int device) const;
  void reset_peak(int device);

  uint64_t create_pool();  // a new pool with one reference
  void retain_pool(uint64_t pool);
  void release_pool(uint64_t pool);
  void begin_capture(int device, StreamId stream, uint64_t pool);  // the stream's allocations go to pool
  void end_capture(int device, StreamId stream);
  size_t pool_block_count(uint64_t pool) const;  // blocks owned by the pool (live or cached)

 private:
  struct Block {
    Block(int d, size_t n, void* p, StreamId s, uint64_t pl) : device(d), size(n), ptr(p), stream(s), pool(pl) {}
    int device;
    size_t size;
    void* ptr;
    StreamId stream;                // allocated on
    uint64_t pool;                  // 0: the general cache
    bool in_use = false;
    bool cached = false;            // in free_
    Block* prev = nullptr;          // neighbours split off the same device allocation
    Block* next = nullptr;
    std::set<StreamId> used_on;     // other streams (record_stream)
    std::vector<EventId> pending;   // events to complete before reuse
  };
  // Free blocks ordered by (device, pool, stream, size, address): lower_bound is the best fit.
  struct FreeOrder {
    bool operator()(const Block* a, const Block* b) const;
  };

  Block* take_free(int device, uint64_t pool, StreamId stream, size_t size);
  void cache_block(Block* b);  // into free_, merged with free neighbours
  void make_free(Block* b);
  void poll_pending();
  void await_streams(Block* b);  // records the events b waits for
  void release_free_blocks(int device);  // general cache only
  void drop_pool_blocks(uint64_t pool);
  CacheStats& stats_for(int device);

  DeviceMemoryApi& api_;
  mutable std::mutex mu_;
  std::unordered_map<void*, Block*> blocks_;                 // every block, by address
  std::set<Block*, FreeOrder> free_;                         // reusable now
  std::vector<Block*> pending_;                              // freed, waiting for other streams
  std::vector<Block*> deferred_;                             // freed during a capture, used on other streams
  std::map<std::pair<int, StreamId>, uint64_t> capturing_;   // (device, stream) -> pool
  std::map<uint64_t, int> pool_refs_;                        // live pools
  uint64_t next_pool_ = 1;
  std::map<int, CacheStats> stats_;
};

}  // namespace kiln::device_cache
#endif  // KILN_RUNTIME_SRC_DEVICE_CACHE_BLOCK_CACHE_H_
