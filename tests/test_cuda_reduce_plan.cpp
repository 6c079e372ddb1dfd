// The CUDA reductions' tiling and combine rules, on the host (kernels/cuda/plan/): launch shapes,
// and a replay of the kernel's exact reduction tree (strided per-thread loops, warp shuffles,
// then a second warp over the warps' partials) compared with the CPU kernels' results.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>
#include "kernels/cuda/plan/reduce_ops.h"
#include "kernels/cuda/plan/reduce_plan.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::cuda_plan;

namespace {

// One warp's shuffle-down tree, as __shfl_down_sync does it: lanes past the end read themselves.
template <typename V, typename Op>
V warp_tree(std::vector<V> lanes, const Op& op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    for (int l = 0; l < kWarp; ++l)
      lanes[size_t(l)] = op.combine(lanes[size_t(l)], lanes[size_t(l + offset < kWarp ? l + offset : l)]);
  return lanes[0];
}

// The kernel's reduction of one row of `len` elements with `threads` threads (group_reduce).
template <typename V, typename Op, typename Load>
V replay_row(int64_t len, int threads, const Op& op, const Load& load) {
  std::vector<V> partial(size_t(threads), op.init());
  for (int t = 0; t < threads; ++t)
    for (int64_t i = t; i < len; i += threads) partial[size_t(t)] = op.combine(partial[size_t(t)], load(i));
  const int warps = threads / kWarp;
  std::vector<V> warp_results(size_t(kWarp), op.init());
  for (int w = 0; w < warps; ++w)
    warp_results[size_t(w)] =
        warp_tree(std::vector<V>(partial.begin() + w * kWarp, partial.begin() + (w + 1) * kWarp), op);
  return warps > 1 ? warp_tree(warp_results, op) : warp_results[0];
}

}  // namespace

TEST_CASE("reduce_shape: a row group per row, about 4 elements per thread, 256 threads a block") {
  ReduceShape s = reduce_shape(32, 1000);
  CHECK(s.threads_per_row == 256);
  CHECK(s.rows_per_block == 1);
  CHECK(s.blocks == 32);
  s = reduce_shape(1000, 10);  // short rows: a warp each, 8 rows a block
  CHECK(s.threads_per_row == 32);
  CHECK(s.rows_per_block == 8);
  CHECK(s.blocks == 125);
  s = reduce_shape(5, 200);
  CHECK(s.threads_per_row == 64);
  CHECK(s.rows_per_block == 4);
  CHECK(s.blocks == 2);
  CHECK(reduce_shape(int64_t(1) << 40, 4).blocks == kMaxGridBlocks);  // blocks loop over the rest
  CHECK(reduce_shared_bytes(reduce_shape(32, 1000), 4, false) == 8 * 4);
  CHECK(reduce_shared_bytes(reduce_shape(1000, 10), 4, true) == 8 * 12);
}

TEST_CASE("reduce plan: every element of a row is read by exactly one lane") {
  for (int64_t len : {1, 31, 32, 33, 1000, 4097})
    for (int threads : {32, 64, 128, 256}) {
      int64_t total = 0;
      for (int lane = 0; lane < threads; ++lane) total += elements_of_lane(len, threads, lane);
      CHECK(total == len);
    }
}

TEST_CASE("reduction tree: sums and maxima of long rows match the CPU, NaN propagates") {
  Tensor x = randn({3000}, TensorOptions(kFloat64));
  const double* p = x.data<double>();
  for (int threads : {32, 256}) {
    double s = replay_row<double>(3000, threads, SumOp<double>{}, [&](int64_t i) { return p[i]; });
    CHECK(s == doctest::Approx(x.sum().item().to_double()).epsilon(1e-12));
    double m = replay_row<double>(3000, threads, MinMaxOp<double, true>{}, [&](int64_t i) { return p[i]; });
    CHECK(m == x.max().item().to_double());
  }
  std::vector<double> v(100, 1.0);
  v[77] = std::numeric_limits<double>::quiet_NaN();
  double m = replay_row<double>(100, 64, MinMaxOp<double, false>{}, [&](int64_t i) { return v[size_t(i)]; });
  CHECK(std::isnan(m));
}

TEST_CASE("reduction tree: argmax/argmin pick the first maximum and the first NaN, like the CPU") {
  // ties spread over different lanes and warps: the first index must win whatever the tree order
  std::vector<float> v(1000, 0.0f);
  for (int64_t i : {900, 37, 512, 38}) v[size_t(i)] = 5.0f;
  v[3] = -7.0f;
  v[998] = -7.0f;
  Tensor t = from_vector<float>(v, {1000});
  for (int threads : {32, 128, 256}) {
    auto load = [&](int64_t i) { return ArgPair<float>{v[size_t(i)], i}; };
    ArgPair<float> mx = replay_row<ArgPair<float>>(1000, threads, ArgOp<float, true>{}, load);
    ArgPair<float> mn = replay_row<ArgPair<float>>(1000, threads, ArgOp<float, false>{}, load);
    CHECK(mx.index == 37);
    CHECK(mx.index == t.argmax().item().to_int());
    CHECK(mn.index == 3);
    CHECK(mn.index == t.argmin().item().to_int());
  }
  v[600] = std::numeric_limits<float>::quiet_NaN();
  v[200] = std::numeric_limits<float>::quiet_NaN();
  Tensor tn = from_vector<float>(v, {1000});
  auto load = [&](int64_t i) { return ArgPair<float>{v[size_t(i)], i}; };
  CHECK(replay_row<ArgPair<float>>(1000, 256, ArgOp<float, true>{}, load).index == 200);
  CHECK(replay_row<ArgPair<float>>(1000, 256, ArgOp<float, false>{}, load).index == 200);
  CHECK(tn.argmax().item().to_int() == 200);
}
