// The caching allocator's bookkeeping (see block_cache.h); one mutex, no device calls under
// assumptions: the DeviceMemoryApi is the only way out.
#include "device_cache/block_cache.h"

#include <algorithm>
#include <tuple>
#include "kiln/error.h"

namespace kiln::device_cache {
namespace {
constexpr size_t kSmallStep = 512;
constexpr size_t kSmallLimit = size_t(1) << 20;
constexpr int kSubClasses = 4;
}  // namespace

size_t size_class_bytes(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= kSmallLimit) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  int lg = 63 - __builtin_clzll(bytes);
  size_t step = (size_t(1) << lg) / kSubClasses;
  return (bytes + step - 1) / step * step;
}

BlockCache::~BlockCache() {
  // Process exit: the driver reclaims device memory; only the bookkeeping is freed here.
  for (auto& [p, b] : blocks_) {
    for (EventId e : b->pending) api_.destroy_event(e);
    delete b;
  }
}

CacheStats& BlockCache::stats_for(int device) { return stats_[device]; }

bool BlockCache::FreeOrder::operator()(const Block* a, const Block* b) const {
  return std::make_tuple(a->device, a->pool, uintptr_t(a->stream), a->size, uintptr_t(a->ptr)) <
         std::make_tuple(b->device, b->pool, uintptr_t(b->stream), b->size, uintptr_t(b->ptr));
}

BlockCache::Block* BlockCache::take_free(int device, uint64_t pool, StreamId stream, size_t size) {
  Block key(device, size, nullptr, stream, pool);  // the smallest (address 0) of its size
  auto it = free_.lower_bound(&key);
  if (it == free_.end()) return nullptr;
  Block* b = *it;
  if (b->device != device || b->pool != pool || b->stream != stream) return nullptr;
  if (size <= kSmallLimit && b->size != size) return nullptr;  // small: its own class only
  free_.erase(it);
  b->cached = false;
  if (b->size - size > kSmallLimit) {  // large and much too big: the rest stays cached
    Block* rest = new Block(device, b->size - size, static_cast<char*>(b->ptr) + size, stream, pool);
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    blocks_[rest->ptr] = rest;
    cache_block(rest);
  }
  return b;
}

void BlockCache::cache_block(Block* b) {
  if (b->prev && b->prev->cached) {  // merge into the free block before
    Block* p = b->prev;
    free_.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    blocks_.erase(b->ptr);
    delete b;
    b = p;
  }
  if (b->next && b->next->cached) {  // absorb the free block after
    Block* n = b->next;
    free_.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    blocks_.erase(n->ptr);
    delete n;
  }
  b->cached = true;
  free_.insert(b);
}

// Called only when no capture is underway.
void BlockCache::poll_pending() {
  while (!deferred_.empty()) {  // left over when recording failed at the end of a capture
    await_streams(deferred_.back());
    deferred_.pop_back();
  }
  for (size_t i = 0; i < pending_.size();) {
    Block* b = pending_[i];
    bool done = std::all_of(b->pending.begin(), b->pending.end(), [&](EventId e) { return api_.event_done(e); });
    if (!done) {
      ++i;
      continue;
    }
    for (EventId e : b->pending) api_.destroy_event(e);
    b->pending.clear();
    pending_.erase(pending_.begin() + std::ptrdiff_t(i));
    cache_block(b);
  }
}

void* BlockCache::allocate(int device, size_t bytes, StreamId stream, const char* op) {
  const size_t size = size_class_bytes(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (capturing_.empty()) poll_pending();  // events cannot be queried during a capture
  uint64_t pool = 0;
  auto cap = capturing_.find({device, stream});
  if (cap != capturing_.end()) pool = cap->second;
  CacheStats& st = stats_for(device);
  Block* b = take_free(device, pool, stream, size);
  if (b) {
    ++st.num_cache_hits;
  } else {
    void* p = api_.malloc(device, size);
    if (!p && capturing_.empty()) {  // give the general cache back and try once more
      release_free_blocks(device);
      p = api_.malloc(device, size);
    }
    KILN_CHECK(p != nullptr, DeviceError, op, "nbytes", "CUDA out of memory: could not allocate ", bytes,
               " bytes on cuda:", device, " (", st.allocated_bytes, " bytes allocated, ", st.reserved_bytes,
               " reserved by kiln", capturing_.empty() ? "" : "; the cache is kept during a graph capture", ")");
    ++st.num_device_mallocs;
    st.reserved_bytes += int64_t(size);
    b = new Block(device, size, p, stream, pool);
    blocks_[p] = b;
  }
  b->in_use = true;
  b->stream = stream;
  st.allocated_bytes += int64_t(b->size);  // a whole block may be more than the class
  st.peak_allocated_bytes = std::max(st.peak_allocated_bytes, st.allocated_bytes);
  return b->ptr;
}

void BlockCache::make_free(Block* b) {
  if (b->pool != 0 && !pool_refs_.count(b->pool)) b->pool = 0;  // its pool is gone: general cache
  if (b->used_on.empty()) {
    cache_block(b);
  } else if (!capturing_.empty()) {
    deferred_.push_back(b);  // an event recorded now would join the captured graph
  } else {
    await_streams(b);
  }
}

// All or nothing: when an event cannot be recorded, b keeps its streams and the error goes on.
void BlockCache::await_streams(Block* b) {
  std::vector<EventId> events;
  try {
    for (StreamId s : b->used_on) events.push_back(api_.record_event(b->device, s));
  } catch (...) {
    for (EventId e : events) api_.destroy_event(e);
    throw;
  }
  b->pending.insert(b->pending.end(), events.begin(), events.end());
  b->used_on.clear();
  pending_.push_back(b);
}

void BlockCache::free(void* p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(p);
  KILN_CHECK(it != blocks_.end() && it->second->in_use, InternalError, "cuda_allocator", "ptr",
             "freeing an address the CUDA allocator did not hand out");
  Block* b = it->second;
  b->in_use = false;
  stats_for(b->device).allocated_bytes -= int64_t(b->size);
  make_free(b);
}

void BlockCache::record_stream(void* p, StreamId stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(p);
  KILN_CHECK(it != blocks_.end() && it->second->in_use, ValueError, "cuda::record_stream", "t",
             "the tensor's memory is not a live block of the CUDA allocator");
  if (it->second->stream != stream) it->second->used_on.insert(stream);
}

// Whole device allocations only: a cached part of a split one stays until its neighbours return.
void BlockCache::release_free_blocks(int device) {
  for (auto it = free_.begin(); it != free_.end();) {
    Block* b = *it;
    if ((device >= 0 && b->device != device) || b->pool != 0 || b->prev || b->next) {
      ++it;
      continue;
    }
    api_.free(b->device, b->ptr);
    CacheStats& st = stats_for(b->device);
    ++st.num_device_frees;
    st.reserved_bytes -= int64_t(b->size);
    blocks_.erase(b->ptr);
    delete b;
    it = free_.erase(it);
  }
}

void BlockCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_CHECK(capturing_.empty(), ValueError, "cuda::empty_cache", "",
             "cannot return memory to the device while a graph capture is underway");
  poll_pending();
  release_free_blocks(-1);
}

CacheStats BlockCache::stats(int device) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stats_.find(device);
  return it == stats_.end() ? CacheStats{} : it->second;
}

void BlockCache::reset_peak(int device) {
  std::lock_guard<std::mutex> lock(mu_);
  CacheStats& st = stats_for(device);
  st.peak_allocated_bytes = st.allocated_bytes;
}

uint64_t BlockCache::create_pool() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_pool_++;
  pool_refs_[id] = 1;
  return id;
}

void BlockCache::retain_pool(uint64_t pool) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool_refs_.find(pool);
  KILN_CHECK(it != pool_refs_.end(), ValueError, "cuda::graph_pool", "pool", "graph memory pool ", pool,
             " no longer exists");
  ++it->second;
}

void BlockCache::release_pool(uint64_t pool) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool_refs_.find(pool);
  if (it == pool_refs_.end() || --it->second > 0) return;
  pool_refs_.erase(it);
  drop_pool_blocks(pool);
}

// The pool's unused blocks join the general cache; blocks still held by tensors follow when freed.
void BlockCache::drop_pool_blocks(uint64_t pool) {
  std::vector<Block*> cached;  // re-keyed: the pool is part of free_'s order
  for (auto it = free_.begin(); it != free_.end();) {
    if ((*it)->pool == pool) {
      cached.push_back(*it);
      it = free_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [p, b] : blocks_)  // every part of the pool's allocations, live, waiting or cached
    if (b->pool == pool) b->pool = 0;
  for (Block* b : cached) free_.insert(b);
}

void BlockCache::begin_capture(int device, StreamId stream, uint64_t pool) {
  std::lock_guard<std::mutex> lock(mu_);
  KILN_CHECK(pool_refs_.count(pool), ValueError, "cuda::Graph::capture_begin", "pool", "graph memory pool ", pool,
             " no longer exists");
  capturing_[{device, stream}] = pool;
}

void BlockCache::end_capture(int device, StreamId stream) {
  std::lock_guard<std::mutex> lock(mu_);
  capturing_.erase({device, stream});
  if (capturing_.empty()) poll_pending();  // records the events of frees the captures held back
}

size_t BlockCache::pool_block_count(uint64_t pool) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [p, b] : blocks_) n += b->pool == pool;
  return n;
}

}  // namespace kiln::device_cache
