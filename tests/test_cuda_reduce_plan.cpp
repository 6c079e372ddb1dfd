// The CUDA reductions' tiling and combine rules, on the host (kernels/cuda/plan/): launch shapes,
// and a replay of the kernel's exact reduction tree (strided per-thread loops, warp shuffles,
// then a second warp over the warps' partials) compared with the CPU kernels' results.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>
#include "kernels/cuda/plan/reduce_ops.h"
#include "kernels/cuda/plan/reduce_plan.h"
#include "kiln/core.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/slice.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"

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

// The kernel's reduction of one row of `len` elements with `threads` threads: each thread folds
// its elements into four partials in turn (reduce_kernel's loop, cuda_plan::fold), then
// group_reduce combines the threads.
template <typename V, typename Op, typename Load>
V replay_row(int64_t len, int threads, const Op& op, const Load& load) {
  std::vector<V> partial(size_t(threads), op.init());
  for (int t = 0; t < threads; ++t) {
    V acc[4] = {op.init(), op.init(), op.init(), op.init()};
    int64_t i = t;
    for (; i + 3 * threads < len; i += 4 * threads)
      for (int k = 0; k < 4; ++k) acc[k] = fold(op, acc[k], load(i + k * threads));
    for (; i < len; i += threads) acc[0] = fold(op, acc[0], load(i));
    partial[size_t(t)] = op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
  }
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
  s = reduce_shape(4096, 4096, kWideAccPerThread);                    // wide accumulators: a warp per row of 4096
  CHECK(s.threads_per_row == 32);
  CHECK(s.rows_per_block == 8);
  CHECK(reduce_shape(4096, 100'000, kWideAccPerThread).threads_per_row == 256);
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

namespace {

// The two-pass reduction of a split row (reduce.cuh: reduce_rows): each chunk through the row
// tree with the chunk's own launch shape, then the row's partials through a second tree.
template <typename V, typename Op, typename Load>
V replay_split_row(int64_t len, const RowSplit& sp, const Op& op, const Load& load) {
  std::vector<V> partials;
  const int chunk_threads = reduce_shape(1, sp.chunk).threads_per_row;
  for (int64_t c = 0; c < sp.splits; ++c) {
    const int64_t begin = c * sp.chunk, n = chunk_length(sp.chunk, len, c);
    partials.push_back(replay_row<V>(n, chunk_threads, op, [&](int64_t i) { return load(begin + i); }));
  }
  const int final_threads = reduce_shape(1, sp.splits).threads_per_row;
  return replay_row<V>(sp.splits, final_threads, op, [&](int64_t i) { return partials[size_t(i)]; });
}

}  // namespace

TEST_CASE("row_split: a lone long row is cut over the SMs, many rows or short ones are not") {
  // full reduction of 10^7 elements on 132 SMs: 528 target blocks, chunks of 18940
  RowSplit sp = row_split(1, 10'000'000, 132);
  CHECK(sp.splits == 528);
  CHECK(sp.chunk == 18940);
  CHECK(chunk_length(sp.chunk, 10'000'000, 527) == 10'000'000 - 527 * 18940);
  // 32 rows of 1000: too short to split (below 2 chunks of 4096)
  sp = row_split(32, 1000, 132);
  CHECK(sp.splits == 1);
  CHECK(sp.chunk == 1000);
  // 4 rows of 100000: 132 blocks per row wanted, but at most 100000 / 4096 = 24 chunks
  sp = row_split(4, 100'000, 132);
  CHECK(sp.splits == 24);
  CHECK(sp.chunk == 4167);
  // enough rows to fill the device: one block group per row, no second pass
  CHECK(row_split(1000, 1'000'000, 132).splits == 1);
  // just long enough for two chunks
  sp = row_split(1, 2 * kMinChunk, 1);
  CHECK(sp.splits == 2);
  CHECK(sp.chunk == kMinChunk);
  CHECK(row_split(1, 2 * kMinChunk - 1, 132).splits == 1);
}

TEST_CASE("row_split: chunks tile the row exactly, none empty") {
  for (int64_t len : {8192, 8193, 100'000, 1'000'003, 10'000'000})
    for (int64_t rows : {1, 3, 64})
      for (int sms : {1, 80, 132}) {
        RowSplit sp = row_split(rows, len, sms);
        int64_t covered = 0;
        for (int64_t c = 0; c < sp.splits; ++c) {
          const int64_t n = chunk_length(sp.chunk, len, c);
          CHECK(n > 0);
          covered += n;
        }
        CHECK(covered == len);
      }
}

TEST_CASE("split reduction: sum, max and argmax over chunks then partials equal the CPU") {
  const int64_t len = 300'000;
  Tensor x = randn({len}, TensorOptions(kFloat64));
  const double* p = x.data<double>();
  RowSplit sp = row_split(1, len, 132);
  REQUIRE(sp.splits > 1);
  double s = replay_split_row<double>(len, sp, SumOp<double>{}, [&](int64_t i) { return p[i]; });
  CHECK(s == doctest::Approx(x.sum().item().to_double()).epsilon(1e-12));
  double m = replay_split_row<double>(len, sp, MinMaxOp<double, true>{}, [&](int64_t i) { return p[i]; });
  CHECK(m == x.max().item().to_double());
  // ties in different chunks: the first index wins; then a NaN in a later chunk wins over all
  std::vector<float> v(size_t(len), 1.0f);
  for (int64_t i : {250'000, 40'000, 40'001, 299'999}) v[size_t(i)] = 9.0f;
  auto load = [&](int64_t i) { return ArgPair<float>{v[size_t(i)], i}; };
  CHECK(replay_split_row<ArgPair<float>>(len, sp, ArgOp<float, true>{}, load).index == 40'000);
  CHECK(from_vector<float>(v, {len}).argmax().item().to_int() == 40'000);
  v[200'000] = std::numeric_limits<float>::quiet_NaN();
  CHECK(replay_split_row<ArgPair<float>>(len, sp, ArgOp<float, true>{}, load).index == 200'000);
  CHECK(replay_split_row<ArgPair<float>>(len, sp, ArgOp<float, false>{}, load).index == 200'000);
}

TEST_CASE("reduce ops: arg max/min's sequential step agrees with combine on later elements") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float values[] = {1.f, 3.f, 3.f, -2.f, nan, 5.f, nan, -7.f};
  for (size_t start = 0; start < 8; ++start) {
    ArgPair<float> a{0.f, -1}, c{0.f, -1}, b{0.f, -1}, d{0.f, -1};
    for (size_t i = start; i < 8; ++i) {
      const ArgPair<float> x{values[i], int64_t(i)};
      a = ArgOp<float, true>{}.step(a, x);
      c = ArgOp<float, true>{}.combine(c, x);
      b = ArgOp<float, false>{}.step(b, x);
      d = ArgOp<float, false>{}.combine(d, x);
      CHECK(a.index == c.index);  // ties keep the first index, the first NaN wins
      CHECK(b.index == d.index);
    }
  }
  // 3, 3 tie: the first; then the first NaN (index 4) over everything after it
  ArgPair<float> m{0.f, -1};
  for (int64_t i = 0; i < 4; ++i) m = ArgOp<float, true>{}.step(m, {values[i], i});
  CHECK(m.index == 1);
  for (int64_t i = 4; i < 8; ++i) m = ArgOp<float, true>{}.step(m, {values[i], i});
  CHECK(m.index == 4);
}

TEST_CASE("reduce ops: prod and all/any combine like the CPU, in any tree order") {
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(0.9 + 0.002 * i);
  Tensor t = from_vector<double>(v, {100});
  double pr = replay_row<double>(100, 64, ProdOp<double>{}, [&](int64_t i) { return v[size_t(i)]; });
  CHECK(pr == doctest::Approx(t.prod().item().to_double()).epsilon(1e-12));
  std::vector<bool> truth(5000, true);
  auto truth_load = [&](int64_t i) { return bool(truth[size_t(i)]); };
  CHECK(replay_row<bool>(5000, 256, LogicalOp<true>{}, truth_load));
  CHECK(replay_row<bool>(5000, 256, LogicalOp<false>{}, truth_load));
  truth[4999] = false;
  CHECK_FALSE(replay_row<bool>(5000, 256, LogicalOp<true>{}, truth_load));
  std::fill(truth.begin(), truth.end(), false);
  truth[1234] = true;
  CHECK(replay_row<bool>(5000, 32, LogicalOp<false>{}, truth_load));
  CHECK(LogicalOp<true>{}.init());  // all of nothing is true, any of nothing false (the CPU's empty results)
  CHECK_FALSE(LogicalOp<false>{}.init());
}

TEST_CASE("softmax layout: rows for the last dim, columns when there are enough, else moved last") {
  CHECK_FALSE(softmax_strided(512, 1));       // last dim: row groups
  CHECK(softmax_strided(4, 600));             // [4, size, 600]: 2400 columns, one thread each
  CHECK_FALSE(softmax_strided(2, 100));       // 200 columns: the dim is moved last instead
  CHECK(softmax_strided(1, kMinStridedColumns));
  // column c of [outer, size, inner] starts at (c / inner) * size * inner + c % inner
  CHECK(column_base(0, 7, 5) == 0);
  CHECK(column_base(4, 7, 5) == 4);
  CHECK(column_base(5, 7, 5) == 35);
  CHECK(column_base(13, 7, 5) == 73);
}

TEST_CASE("softmax columns: the kernel's walk down each column equals the CPU softmax and log_softmax") {
  const int64_t outer = 4, size = 50, inner = 600;
  Tensor x = randn({outer, size, inner}, TensorOptions(kFloat64)) * 4;
  const double* p = x.data<double>();
  std::vector<double> soft(size_t(x.numel())), logs(size_t(x.numel()));
  const MinMaxOp<double, true> max_op;
  for (int64_t c = 0; c < outer * inner; ++c) {  // softmax_columns_kernel, one column per thread
    const int64_t base = column_base(c, size, inner);
    double m = max_op.init(), s = 0;
    for (int64_t j = 0; j < size; ++j) m = max_op.combine(m, p[base + j * inner]);
    for (int64_t j = 0; j < size; ++j) s += std::exp(p[base + j * inner] - m);
    for (int64_t j = 0; j < size; ++j) {
      soft[size_t(base + j * inner)] = std::exp(p[base + j * inner] - m) / s;
      logs[size_t(base + j * inner)] = p[base + j * inner] - (m + std::log(s));
    }
  }
  std::vector<double> want_soft = softmax(x, 1).to_vector<double>(), want_log = log_softmax(x, 1).to_vector<double>();
  for (size_t i = 0; i < soft.size(); ++i) {
    REQUIRE(soft[i] == doctest::Approx(want_soft[i]).epsilon(1e-12));
    REQUIRE(logs[i] == doctest::Approx(want_log[i]).epsilon(1e-12));
  }
}

namespace {

// reduce_columns_kernel on the host: for each column, kColumnSlices threads stride down the
// column (within each chunk of a split), slice partials combine in slice order, then each
// column's chunk partials go through the row tree (pass 2).
template <typename V, typename Op, typename Load>
std::vector<V> replay_columns(int64_t columns, int64_t len, int64_t inner, const ColumnShape& s, const Op& op,
                              const Load& load) {
  std::vector<V> out;
  for (int64_t c = 0; c < columns; ++c) {
    std::vector<V> partials;
    for (int64_t split = 0; split < s.splits; ++split) {
      const int64_t begin = split * s.chunk, n = chunk_length(s.chunk, len, split);
      std::vector<V> slice(size_t(kColumnSlices), op.init());
      for (int y = 0; y < kColumnSlices; ++y)
        for (int64_t j = y; j < n; j += kColumnSlices)
          slice[size_t(y)] = op.combine(slice[size_t(y)], load(column_base(c, len, inner) + (begin + j) * inner, begin + j));
      V acc = slice[0];
      for (int y = 1; y < kColumnSlices; ++y) acc = op.combine(acc, slice[size_t(y)]);
      partials.push_back(acc);
    }
    out.push_back(s.splits == 1 ? partials[0]
                                : replay_row<V>(s.splits, reduce_shape(1, s.splits).threads_per_row, op,
                                                [&](int64_t i) { return partials[size_t(i)]; }));
  }
  return out;
}

}  // namespace

TEST_CASE("column_shape: tiles of 32 columns, long columns split over gridDim.y when tiles are few") {
  ColumnShape s = column_shape(10, 100'000, 132);  // sum over dim 0 of [100000, 10]
  CHECK(s.tiles == 1);
  CHECK(s.chunk == 190);    // 528 target blocks (at most 100000 / 128 = 781 chunks): chunks of 190
  CHECK(s.splits == 527);  // ... of which 527 cover the column
  s = column_shape(19'200, 1000, 132);  // 600 tiles fill the device: not split
  CHECK(s.tiles == 600);
  CHECK(s.splits == 1);
  CHECK(s.chunk == 1000);
  s = column_shape(100'000, 64, 132);  // many columns: one pass
  CHECK(s.tiles == 3125);
  CHECK(s.splits == 1);
  s = column_shape(33, 300, 132);  // 2 tiles; 300 / 128 = 2 chunks of 150
  CHECK(s.tiles == 2);
  CHECK(s.splits == 2);
  CHECK(s.chunk == 150);
  CHECK(column_shape(33, 255, 132).splits == 1);
}

TEST_CASE("column reduction: sum, max and argmax over leading dims equal the CPU, split or not") {
  Tensor x = randn({700, 3, 40}, TensorOptions(kFloat64));  // reduce dim 0: columns 120, len 700
  const double* p = x.data<double>();
  for (int sms : {1, 132}) {
    ColumnShape s = column_shape(120, 700, sms);
    CAPTURE(s.splits);
    auto sums = replay_columns<double>(120, 700, 120, s, SumOp<double>{}, [&](int64_t off, int64_t) { return p[off]; });
    std::vector<double> want = sum(x, {0}).to_vector<double>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(sums[i] == doctest::Approx(want[i]).epsilon(1e-12));
    auto maxes =
        replay_columns<double>(120, 700, 120, s, MinMaxOp<double, true>{}, [&](int64_t off, int64_t) { return p[off]; });
    CHECK(maxes == amax(x, {0}).to_vector<double>());
  }
  // [4, 300, 50] over dim 1: outer 4, columns 200; ties and a NaN placed in different chunks
  std::vector<float> v(4 * 300 * 50, 0.0f);
  auto at = [](int64_t o, int64_t j, int64_t i) { return size_t((o * 300 + j) * 50 + i); };
  v[at(0, 250, 7)] = 2;
  v[at(0, 20, 7)] = 2;
  v[at(3, 299, 49)] = 5;
  v[at(2, 160, 0)] = std::numeric_limits<float>::quiet_NaN();
  v[at(2, 10, 0)] = 9;
  Tensor t = from_vector<float>(v, {4, 300, 50});
  ColumnShape s = column_shape(200, 300, 132);
  REQUIRE(s.splits > 1);
  auto args = replay_columns<ArgPair<float>>(200, 300, 50, s, ArgOp<float, true>{},
                                             [&](int64_t off, int64_t j) { return ArgPair<float>{v[size_t(off)], j}; });
  std::vector<int64_t> want = argmax(t, 1).to_vector<int64_t>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(args[i].index == want[i]);
  CHECK(args[7].index == 20);
  CHECK(args[2 * 50].index == 160);
  CHECK(args[3 * 50 + 49].index == 299);
}

TEST_CASE("reduce ops: bool and 8/16-bit integers accumulate in int64 and combine like the CPU") {
  static_assert(std::is_same_v<acc_t<uint8_t>, int64_t> && std::is_same_v<acc_t<int8_t>, int64_t> &&
                std::is_same_v<acc_t<int16_t>, int64_t> && std::is_same_v<acc_t<bool>, int64_t>);
  // 3000 uint8 values of up to 255 overflow any 8- or 16-bit accumulator; the CPU's sum is int64.
  std::vector<uint8_t> u(3000);
  for (size_t i = 0; i < u.size(); ++i) u[i] = uint8_t((i * 37 + 11) % 256);
  Tensor tu = from_vector<uint8_t>(u, {3000});
  auto load_u = [&](int64_t i) { return acc_t<uint8_t>(u[size_t(i)]); };
  CHECK(replay_row<int64_t>(3000, 256, SumOp<int64_t>{}, load_u) == tu.sum().item().to_int());
  CHECK(tu.sum().dtype() == kInt64);
  CHECK(replay_row<int64_t>(3000, 256, MinMaxOp<int64_t, true>{}, load_u) == tu.max().item().to_int());
  CHECK(replay_row<int64_t>(3000, 32, MinMaxOp<int64_t, false>{}, load_u) == tu.min().item().to_int());
  auto arg_u = [&](int64_t i) { return ArgPair<int64_t>{int64_t(u[size_t(i)]), i}; };
  CHECK(replay_row<ArgPair<int64_t>>(3000, 128, ArgOp<int64_t, true>{}, arg_u).index == tu.argmax().item().to_int());

  std::vector<int8_t> s(500);
  for (size_t i = 0; i < s.size(); ++i) s[i] = int8_t(int(i % 256) - 128);
  Tensor ts = from_vector<int8_t>(s, {500});
  auto load_s = [&](int64_t i) { return acc_t<int8_t>(s[size_t(i)]); };
  CHECK(replay_row<int64_t>(500, 64, SumOp<int64_t>{}, load_s) == ts.sum().item().to_int());
  CHECK(replay_row<int64_t>(500, 64, MinMaxOp<int64_t, false>{}, load_s) == -128);

  // A bool sum counts the true elements; its max is "any".
  std::vector<bool> mask(4000);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 == 0;
  auto load_b = [&](int64_t i) { return acc_t<bool>(mask[size_t(i)]); };
  CHECK(replay_row<int64_t>(4000, 256, SumOp<int64_t>{}, load_b) == 1334);
  CHECK(replay_row<int64_t>(4000, 256, MinMaxOp<int64_t, true>{}, load_b) == 1);
  CHECK(replay_row<int64_t>(4000, 256, MinMaxOp<int64_t, false>{}, load_b) == 0);
}

TEST_CASE("reduce ops: complex sums and products combine like the CPU in the kernel's tree order") {
  static_assert(std::is_same_v<acc_t<complex<float>>, complex<float>>);
  Tensor z = randn({2000}, TensorOptions(kComplex128));
  const complex<double>* p = z.data<complex<double>>();
  complex<double> want = z.sum().item().to<complex<double>>();
  for (int threads : {32, 256}) {
    complex<double> s = replay_row<complex<double>>(2000, threads, SumOp<complex<double>>{}, [&](int64_t i) { return p[i]; });
    CHECK(s.re == doctest::Approx(want.re).epsilon(1e-12));
    CHECK(s.im == doctest::Approx(want.im).epsilon(1e-12));
  }
  Tensor near_one = z.slice(0, 0, 100) * 0.01 + 1;
  const complex<double>* q = near_one.data<complex<double>>();
  complex<double> pr = replay_row<complex<double>>(100, 64, ProdOp<complex<double>>{}, [&](int64_t i) { return q[i]; });
  complex<double> want_pr = near_one.prod().item().to<complex<double>>();
  CHECK(pr.re == doctest::Approx(want_pr.re).epsilon(1e-12));
  CHECK(pr.im == doctest::Approx(want_pr.im).epsilon(1e-12));
}
