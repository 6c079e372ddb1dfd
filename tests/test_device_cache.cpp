// The CUDA caching allocator's bookkeeping (runtime/src/device_cache/block_cache.h), driven on
// the host with fake device memory and events that complete when the test says so.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <vector>
#include "runtime/src/device_cache/block_cache.h"
#include "support/test_helpers.h"

using namespace kiln;
using namespace kiln::device_cache;

namespace {

struct FakeDevice final : DeviceMemoryApi {
  ~FakeDevice() override {  // what the cache still holds at the end of a test (a driver reclaims it at exit)
    for (auto& [p, bytes] : sizes) std::free(p);
  }
  size_t capacity = size_t(1) << 30, used = 0;
  int mallocs = 0, frees = 0;
  std::set<EventId> done_events, live_events;
  int next_event = 1;
  void* malloc(int, size_t bytes) override {
    if (used + bytes > capacity) return nullptr;
    used += bytes;
    ++mallocs;
    void* p = std::malloc(bytes);
    sizes[p] = bytes;
    return p;
  }
  void free(int, void* p) override {
    used -= sizes.at(p);
    sizes.erase(p);
    ++frees;
    std::free(p);
  }
  EventId record_event(int, StreamId) override {
    EventId e = reinterpret_cast<EventId>(uintptr_t(next_event++));
    live_events.insert(e);
    return e;
  }
  bool event_done(EventId e) override {
    ++queries;
    return done_events.count(e) > 0;
  }
  int queries = 0;
  void destroy_event(EventId e) override { live_events.erase(e); }
  void complete_all() { done_events.insert(live_events.begin(), live_events.end()); }
  std::map<void*, size_t> sizes;
};

StreamId stream(int i) { return reinterpret_cast<StreamId>(uintptr_t(i)); }
const StreamId kDefault = nullptr;

}  // namespace

TEST_CASE("device cache: size classes are 512-byte steps to 1 MiB, then 4 per power of two") {
  CHECK(size_class_bytes(0) == 512);
  CHECK(size_class_bytes(1) == 512);
  CHECK(size_class_bytes(513) == 1024);
  CHECK(size_class_bytes(1 << 20) == (1 << 20));
  CHECK(size_class_bytes((1 << 20) + 1) == (1 << 20) + (1 << 18));
  CHECK(size_class_bytes(3 << 20) == (3 << 20));
  CHECK(size_class_bytes((3 << 20) + 1) == (7 << 19));  // 3.5 MiB
}

TEST_CASE("device cache: a steady loop reaches the device only in its first iteration") {
  FakeDevice dev;
  BlockCache cache(dev);
  for (int iter = 0; iter < 5; ++iter) {
    std::vector<void*> live;
    for (size_t bytes : {size_t(4000), size_t(4000), size_t(1) << 22, size_t(100)})
      live.push_back(cache.allocate(0, bytes, kDefault, "test"));
    for (void* p : live) cache.free(p);
    CHECK(dev.mallocs == 4);
  }
  CacheStats s = cache.stats(0);
  CHECK(s.num_device_mallocs == 4);
  CHECK(s.num_cache_hits == 16);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.reserved_bytes == int64_t(4096 + 4096 + (1 << 22) + 512));
  CHECK(s.peak_allocated_bytes == s.reserved_bytes);
}

TEST_CASE("device cache: blocks are reused per stream, and empty_cache returns the unused ones") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* a = cache.allocate(0, 1000, stream(1), "test");
  cache.free(a);
  void* b = cache.allocate(0, 1000, stream(2), "test");  // another stream: a new block
  CHECK(b != a);
  void* c = cache.allocate(0, 900, stream(1), "test");   // same class, same stream: a again
  CHECK(c == a);
  cache.free(b);
  cache.empty_cache();
  CHECK(dev.frees == 1);  // b only; c is live
  CacheStats s = cache.stats(0);
  CHECK(s.reserved_bytes == 1024);
  CHECK(s.allocated_bytes == 1024);
  CHECK(s.num_device_frees == 1);
  cache.free(c);
}

TEST_CASE("device cache: a block used on another stream waits for that stream's event") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* a = cache.allocate(0, 2048, stream(1), "test");
  cache.record_stream(a, stream(2));
  cache.free(a);
  CHECK(dev.live_events.size() == 1);
  void* b = cache.allocate(0, 2048, stream(1), "test");
  CHECK(b != a);  // stream 2 may still be reading a
  dev.complete_all();
  cache.free(b);
  void* c = cache.allocate(0, 2048, stream(1), "test");
  void* d = cache.allocate(0, 2048, stream(1), "test");
  CHECK(std::set<void*>{c, d} == std::set<void*>{a, b});
  CHECK(dev.live_events.empty());
  CHECK(dev.mallocs == 2);
}

TEST_CASE("device cache: graph pool blocks stay out of general reuse while the pool lives") {
  FakeDevice dev;
  BlockCache cache(dev);
  uint64_t pool = cache.create_pool();
  cache.begin_capture(0, stream(3), pool);
  void* g1 = cache.allocate(0, 4096, stream(3), "test");
  void* g2 = cache.allocate(0, 4096, stream(3), "test");
  cache.end_capture(0, stream(3));
  CHECK(cache.pool_block_count(pool) == 2);
  cache.free(g1);  // freed after capture: still the graph's
  void* other = cache.allocate(0, 4096, stream(3), "test");
  CHECK(other != g1);
  cache.empty_cache();  // pool blocks are not returned
  CHECK(cache.pool_block_count(pool) == 2);
  // A second capture sharing the pool reuses the pool's free block.
  cache.retain_pool(pool);
  cache.begin_capture(0, stream(3), pool);
  void* g3 = cache.allocate(0, 4096, stream(3), "test");
  cache.end_capture(0, stream(3));
  CHECK(g3 == g1);
  cache.release_pool(pool);  // the second graph goes
  cache.free(g3);
  CHECK(cache.pool_block_count(pool) == 2);
  cache.release_pool(pool);  // the last reference: blocks join the general cache
  CHECK(cache.pool_block_count(pool) == 0);
  cache.free(g2);
  void* reuse = cache.allocate(0, 4096, stream(3), "test");
  CHECK((reuse == g1 || reuse == g2));
  cache.free(reuse);
  cache.free(other);
  CHECK(testing::has(testing::error_text<ValueError>([&] { cache.begin_capture(0, stream(3), pool); }),
                     "no longer exists"));
}

TEST_CASE("device cache: out of memory frees the cache, retries, then names the op and sizes") {
  FakeDevice dev;
  dev.capacity = 10000;
  BlockCache cache(dev);
  void* a = cache.allocate(0, 6000, kDefault, "test");
  cache.free(a);  // cached, 6144 bytes reserved
  void* b = cache.allocate(0, 8000, kDefault, "test");  // fits only once the cache is returned
  CHECK(dev.frees == 1);
  std::string msg = testing::error_text<DeviceError>([&] { cache.allocate(0, 5000, kDefault, "mul"); });
  CHECK(testing::has(msg, "mul"));
  CHECK(testing::has(msg, "5000 bytes"));
  CHECK(testing::has(msg, "cuda:0"));
  cache.free(b);
  CHECK(cache.stats(0).allocated_bytes == 0);
}

TEST_CASE("device cache: statistics are per device, and reset_peak starts the peak from what is live") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* a = cache.allocate(0, 3000, kDefault, "test");  // 3072
  void* b = cache.allocate(1, 5 << 20, kDefault, "test");  // large: 5 MiB is a class boundary
  void* c = cache.allocate(0, 100, kDefault, "test");   // 512
  cache.free(a);
  CacheStats s0 = cache.stats(0), s1 = cache.stats(1);
  CHECK(s0.allocated_bytes == 512);
  CHECK(s0.reserved_bytes == 3072 + 512);
  CHECK(s0.peak_allocated_bytes == 3072 + 512);
  CHECK(s0.num_device_mallocs == 2);
  CHECK(s1.allocated_bytes == (5 << 20));
  CHECK(s1.num_device_mallocs == 1);
  CHECK(cache.stats(2).reserved_bytes == 0);  // a device never used
  cache.reset_peak(0);
  CHECK(cache.stats(0).peak_allocated_bytes == 512);
  void* d = cache.allocate(0, 2900, kDefault, "test");  // a's class: a hit
  CHECK(d == a);
  CHECK(cache.stats(0).num_cache_hits == 1);
  CHECK(cache.stats(0).peak_allocated_bytes == 3072 + 512);
  cache.free(b);
  cache.free(c);
  cache.free(d);
  cache.empty_cache();
  CHECK(cache.stats(0).reserved_bytes == 0);
  CHECK(cache.stats(1).reserved_bytes == 0);
  CHECK(cache.stats(0).num_device_frees == 2);
  CHECK(dev.sizes.empty());
}

TEST_CASE("device cache: small and large requests never share a block") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* large = cache.allocate(0, (1 << 20) + 1, kDefault, "test");
  cache.free(large);
  void* small = cache.allocate(0, 1 << 20, kDefault, "test");  // the largest small class
  CHECK(small != large);
  CHECK(dev.mallocs == 2);
  cache.free(small);
}

TEST_CASE("device cache: record_stream on the allocating stream needs no event, bad addresses are refused") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* a = cache.allocate(0, 512, stream(1), "test");
  cache.record_stream(a, stream(1));
  cache.free(a);
  CHECK(dev.live_events.empty());
  CHECK(cache.allocate(0, 512, stream(1), "test") == a);
  int local = 0;
  CHECK(testing::has(testing::error_text<ValueError>([&] { cache.record_stream(&local, stream(1)); }),
                     "cuda::record_stream"));
  CHECK_THROWS_AS(cache.free(&local), InternalError);
  cache.free(a);
  CHECK_THROWS_AS(cache.free(a), InternalError);  // twice
}

TEST_CASE("device cache: during a capture no event is recorded or queried, and nothing is returned to the device") {
  FakeDevice dev;
  BlockCache cache(dev);
  void* shared = cache.allocate(0, 4096, stream(1), "test");
  cache.record_stream(shared, stream(2));
  void* waiting = cache.allocate(0, 1024, stream(1), "test");
  cache.record_stream(waiting, stream(2));
  cache.free(waiting);  // before the capture: an event is recorded
  REQUIRE(dev.live_events.size() == 1);
  void* cached = cache.allocate(0, 8192, stream(1), "test");
  cache.free(cached);

  uint64_t pool = cache.create_pool();
  cache.begin_capture(0, stream(3), pool);
  const int queries = dev.queries;
  cache.free(shared);  // used on stream 2: its event must wait for the capture's end
  CHECK(dev.live_events.size() == 1);
  void* g = cache.allocate(0, 512, stream(3), "test");
  CHECK(dev.queries == queries);  // the pending event was not polled
  CHECK(testing::has(testing::error_text<ValueError>([&] { cache.empty_cache(); }), "capture"));
  dev.capacity = dev.used;  // full: the cached 8 KiB must not be cudaFree'd mid-capture
  std::string oom = testing::error_text<DeviceError>([&] { cache.allocate(0, 512, stream(3), "relu"); });
  CHECK(testing::has(oom, "relu"));
  CHECK(testing::has(oom, "graph capture"));
  CHECK(dev.frees == 0);
  dev.capacity = size_t(1) << 30;
  cache.end_capture(0, stream(3));
  CHECK(dev.live_events.size() == 2);  // shared's event, recorded now
  CHECK(cache.allocate(0, 4096, stream(1), "test") != shared);  // stream 2 may still read it
  dev.complete_all();
  void* again = cache.allocate(0, 4096, stream(1), "test");
  CHECK(again == shared);
  CHECK(dev.live_events.empty());
  CHECK(cache.allocate(0, 1024, stream(1), "test") == waiting);
  cache.free(g);
  cache.release_pool(pool);
}

TEST_CASE("device cache: a cached large block is split for a smaller large request and merged when both parts return") {
  constexpr size_t MiB = size_t(1) << 20;
  FakeDevice dev;
  BlockCache cache(dev);
  char* whole = static_cast<char*>(cache.allocate(0, 8 * MiB, kDefault, "test"));
  cache.free(whole);
  void* a = cache.allocate(0, 3 * MiB, kDefault, "test");  // 3 MiB of the 8, 5 MiB stay cached
  void* b = cache.allocate(0, 5 * MiB, kDefault, "test");  // exactly the rest
  CHECK(a == whole);
  CHECK(b == whole + 3 * MiB);
  CHECK(dev.mallocs == 1);
  CacheStats s = cache.stats(0);
  CHECK(s.allocated_bytes == int64_t(8 * MiB));
  CHECK(s.reserved_bytes == int64_t(8 * MiB));
  CHECK(s.num_cache_hits == 2);
  void* c = cache.allocate(0, 2 * MiB, kDefault, "test");  // nothing cached fits
  CHECK(dev.mallocs == 2);
  cache.free(a);
  cache.empty_cache();  // a's part cannot go back alone
  CHECK(dev.frees == 0);
  cache.free(b);        // merged with a: the whole 8 MiB again
  CHECK(cache.allocate(0, 8 * MiB, kDefault, "test") == whole);
  CHECK(dev.mallocs == 2);
  cache.free(whole);
  cache.empty_cache();  // now whole: returned
  CHECK(dev.frees == 1);
  CHECK(cache.stats(0).reserved_bytes == int64_t(2 * MiB));
  cache.free(c);
}

TEST_CASE("device cache: no split leaves 1 MiB or less, middle parts merge both ways, streams do not mix") {
  constexpr size_t MiB = size_t(1) << 20;
  FakeDevice dev;
  BlockCache cache(dev);
  char* whole = static_cast<char*>(cache.allocate(0, 8 * MiB, stream(1), "test"));
  cache.free(whole);
  CHECK(cache.allocate(0, 3 * MiB, stream(2), "test") != whole);  // cached on stream 1 only
  void* seven = cache.allocate(0, 7 * MiB, stream(1), "test");    // 1 MiB left over: the whole block
  CHECK(seven == whole);
  CHECK(cache.stats(0).allocated_bytes == int64_t(8 * MiB + 3 * MiB));
  cache.free(seven);
  void* p1 = cache.allocate(0, 2 * MiB, stream(1), "test");
  void* p2 = cache.allocate(0, 2 * MiB, stream(1), "test");
  void* p3 = cache.allocate(0, 4 * MiB, stream(1), "test");
  CHECK(p1 == whole);
  CHECK(p2 == whole + 2 * MiB);
  CHECK(p3 == whole + 4 * MiB);
  CHECK(dev.mallocs == 2);
  cache.free(p1);
  cache.free(p3);
  cache.free(p2);  // joins the part before and the part after
  CHECK(cache.allocate(0, 8 * MiB, stream(1), "test") == whole);
  CHECK(dev.mallocs == 2);
}

TEST_CASE("device cache: a split graph-pool block and its rest stay in the pool, and leave it together") {
  constexpr size_t MiB = size_t(1) << 20;
  FakeDevice dev;
  BlockCache cache(dev);
  uint64_t pool = cache.create_pool();
  cache.begin_capture(0, stream(3), pool);
  char* big = static_cast<char*>(cache.allocate(0, 8 * MiB, stream(3), "test"));
  cache.free(big);
  void* part = cache.allocate(0, 2 * MiB, stream(3), "test");
  cache.end_capture(0, stream(3));
  CHECK(part == big);
  CHECK(cache.pool_block_count(pool) == 2);
  CHECK(cache.allocate(0, 6 * MiB, stream(3), "test") != big + 2 * MiB);  // not the pool's rest
  cache.release_pool(pool);
  CHECK(cache.pool_block_count(pool) == 0);
  void* rest = cache.allocate(0, 6 * MiB, stream(3), "test");
  CHECK(rest == big + 2 * MiB);  // the rest joined the general cache
  cache.free(part);
  cache.free(rest);
  cache.empty_cache();
  CHECK(cache.stats(0).reserved_bytes == int64_t(6 * MiB));  // the other 6 MiB block is live
}

TEST_CASE("device cache: random traffic keeps live blocks disjoint and gives everything back at the end") {
  FakeDevice dev;
  BlockCache cache(dev);
  std::mt19937 rng(7);
  std::map<char*, size_t> live;  // address -> requested bytes
  auto overlaps = [&](char* p, size_t n) {
    auto after = live.lower_bound(p);
    if (after != live.end() && after->first < p + n) return true;
    if (after == live.begin()) return false;
    auto before = std::prev(after);
    return before->first + before->second > p;
  };
  const size_t sizes[] = {100, 512, 3000, 70000, size_t(1) << 20, (size_t(3) << 20) + 5, size_t(9) << 20,
                          size_t(2) << 20};
  for (int step = 0; step < 4000; ++step) {
    const int action = int(rng() % 10);
    if (action < 5 || live.empty()) {
      size_t n = sizes[rng() % 8];
      char* p = static_cast<char*>(cache.allocate(0, n, stream(1 + int(rng() % 2)), "test"));
      REQUIRE_FALSE(overlaps(p, n));
      live[p] = n;
    } else {
      auto it = live.begin();
      std::advance(it, long(rng() % live.size()));
      if (action == 9) cache.record_stream(it->first, stream(3));
      cache.free(it->first);
      live.erase(it);
    }
    if (step % 97 == 0) dev.complete_all();
    if (step % 501 == 0) cache.empty_cache();
  }
  for (auto& [p, n] : live) cache.free(p);
  dev.complete_all();
  cache.empty_cache();
  CacheStats s = cache.stats(0);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.reserved_bytes == 0);
  CHECK(s.num_device_mallocs == s.num_device_frees);
  CHECK(dev.sizes.empty());
  CHECK(dev.live_events.empty());
}
