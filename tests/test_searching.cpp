// The search and histogram ops beyond what the generated samples reach: NaN, empty inputs,
// right/side, sorter, out_int32, mixed dtypes, N-D sequences, bins edges, typed errors naming
// the op and the argument, out= variants, non-contiguous inputs, long inputs against a plain
// loop and independence of the thread count. Values with NaN, bins edges and bincount's dtypes
// are PyTorch 1.13's on the same inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>
#include "kernels/include/kiln/common/search_rules.h"
#include "kiln/core.h"
#include "kiln/gen/api/_bincount.h"
#include "kiln/gen/api/bincount.h"
#include "kiln/gen/api/bucketize.h"
#include "kiln/gen/api/histc.h"
#include "kiln/gen/api/histogram.h"
#include "kiln/gen/api/searchsorted.h"
#include "kiln/threads.h"
#include "support/test_helpers.h"

using namespace kiln;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

// The kind, op and argument of the error f() raises.
template <typename E, typename Fn>
void expect_error(Fn&& f, const char* op, const char* arg, const char* text) {
  try {
    f();
    FAIL("expected an exception");
  } catch (const E& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(e.op() == op);
    CHECK(e.arg() == arg);
    CHECK(has(e.what(), text));
  }
}

Tensor longs(std::vector<int64_t> v) { return from_vector<int64_t>(v, {int64_t(v.size())}); }
Tensor floats(std::vector<float> v) { return from_vector<float>(v, {int64_t(v.size())}); }

}  // namespace

TEST_CASE("search rules: PyTorch's probes on the host (NaN values at the end, NaN in the sequence)") {
  const float seq[] = {1, 2, 2, 3, NAN};
  CHECK(search::bound<float>(seq, nullptr, 5, 2.0f, false) == 1);
  CHECK(search::bound<float>(seq, nullptr, 5, 2.0f, true) == 5);  // the NaN at the end sends it right
  CHECK(search::bound<float>(seq, nullptr, 5, NAN, false) == 5);
  CHECK(search::bound<float>(seq, nullptr, 0, 2.0f, false) == 0);
  const int64_t sorter[] = {1, 2, 0};
  const int32_t unsorted[] = {3, 1, 2};
  CHECK(search::bound<int32_t>(unsorted, sorter, 3, 2, false) == 1);
  CHECK(search::bound<int32_t>(unsorted, sorter, 3, 4, false) == 3);
  CHECK(search::histc_bin<float>(3.0f, 1.0f, 3.0f, 4) == 3);  // the max edge is the last bin's
  CHECK(search::histc_bin<float>(0.5f, 1.0f, 3.0f, 4) == -1);
  CHECK(search::histc_bin<float>(NAN, 1.0f, 3.0f, 4) == 0);  // PyTorch 1.13 CPU counts NaN in the first bin
  CHECK(search::histc_bin<double>(2.0, 1.0, 3.0, 4) == 2);
  // A range that rounds to zero width (0/0) or a product that overflows: bin 0, as PyTorch on x86
  CHECK(search::histc_bin<float>(1.0f, 1.0f, 1.0f, 4) == 0);
  CHECK(search::histc_bin<float>(3e38f, -3.4e38f, 3.4e38f, 100) == 0);
}

TEST_CASE("searchsorted: NaN, right and side, out_int32, the scalar form") {
  Tensor s = floats({1, 2, 2, 3, NAN});
  Tensor v = floats({NAN, 2, 0, 5, 3});
  CHECK(ints(searchsorted(s, v)) == std::vector<int64_t>{5, 1, 0, 5, 5});  // PyTorch 1.13's answers
  CHECK(ints(searchsorted(s, v, false, true)) == std::vector<int64_t>{5, 5, 0, 5, 5});
  CHECK(ints(searchsorted(s, v, false, false, "right")) == std::vector<int64_t>{5, 5, 0, 5, 5});
  CHECK(ints(searchsorted(s, v, false, true, "right")) == std::vector<int64_t>{5, 5, 0, 5, 5});
  Tensor i32 = searchsorted(s, v, /*out_int32=*/true);
  CHECK(i32.dtype() == DType::Int32);
  CHECK(ints(i32) == std::vector<int64_t>{5, 1, 0, 5, 5});
  Tensor one = searchsorted(floats({1, 2, 3}), Scalar(2), false, false, "right");
  CHECK(one.dim() == 0);
  CHECK(one.item<int64_t>() == 2);
  CHECK(searchsorted(floats({1, 2, 3}), Scalar(2)).item<int64_t>() == 1);
}

TEST_CASE("searchsorted: N-D rows, mixed dtypes, empty inputs, non-contiguous values, out=") {
  Tensor s = from_vector<int64_t>({1, 3, 5, 2, 4, 6}, {2, 3});
  Tensor v = from_vector<int64_t>({0, 3, 6, 2, 5, 7}, {2, 3});
  expect_values(searchsorted(s, v), {2, 3}, {0, 1, 3, 0, 2, 3});
  expect_values(searchsorted(s, v, false, true), {2, 3}, {0, 2, 3, 1, 2, 3});
  // int64 sequence, float values: compared in float32 (PyTorch promotes both)
  CHECK(ints(searchsorted(longs({1, 2, 3}), floats({1.5f, 2.5f, 3.0f}))) == std::vector<int64_t>{1, 2, 2});
  CHECK(ints(searchsorted(from_vector<int64_t>({}, {0}), longs({1, 4}))) == std::vector<int64_t>{0, 0});
  Tensor none = searchsorted(longs({1, 2}), from_vector<int64_t>({}, {0}));
  CHECK(none.numel() == 0);
  CHECK(none.dtype() == DType::Int64);
  // values as a transposed view: the same answers as their contiguous copy
  Tensor base = from_vector<float>({0.5f, 4, 2, 9, 1, 3}, {2, 3});
  Tensor seq = floats({0, 1, 2, 3, 5, 8});
  CHECK(ints(searchsorted(seq, base.t())) == ints(searchsorted(seq, base.t().contiguous())));
  Tensor out = empty({0}, DType::Int64);
  searchsorted_out(out, seq, floats({2.5f, 8, 9}));
  CHECK(ints(out) == std::vector<int64_t>{3, 5, 6});
}

TEST_CASE("searchsorted: sorter") {
  Tensor s = longs({3, 1, 2});
  CHECK(ints(searchsorted(s, longs({1, 4}), false, false, std::nullopt, longs({1, 2, 0}))) ==
        std::vector<int64_t>{0, 3});
  CHECK(ints(searchsorted(s, longs({2}), false, true, std::nullopt, longs({1, 2, 0}))) == std::vector<int64_t>{2});
  expect_error<ShapeError>(
      [&] {
        searchsorted(s, longs({1}), false, false, std::nullopt, longs({1, 2}));
      },
      "searchsorted", "sorter", "boundary and sorter must have the same size");
  expect_error<DTypeError>(
      [&] {
        searchsorted(s, longs({1}), false, false, std::nullopt, from_vector<int32_t>({1, 2, 0}, {3}));
      },
      "searchsorted", "sorter", "sorter must be a tensor of long dtype but got dtype");
  // PyTorch reads out of bounds here; kiln refuses
  expect_error<IndexError>(
      [&] {
        searchsorted(s, longs({1}), false, false, std::nullopt, longs({1, 2, 5}));
      },
      "searchsorted", "sorter", "out of range");
}

TEST_CASE("searchsorted: argument errors with PyTorch's messages") {
  Tensor s = floats({1, 2, 3});
  expect_error<ValueError>([&] { searchsorted(s, floats({1}), false, false, "foo"); }, "searchsorted", "side",
                           "side can only be 'left' or 'right' but got foo");
  expect_error<ValueError>([&] { searchsorted(s, floats({1}), false, true, "left"); }, "searchsorted", "right",
                           "side and right can't be set to opposites, got side of left while right was True");
  expect_error<ShapeError>([&] { searchsorted(from_vector<float>({2}, {}), floats({1})); }, "searchsorted",
                           "sorted_sequence", "boundaries tensor should have positive dimension");
  expect_error<ShapeError>(
      [&] {
        searchsorted(from_vector<float>({1, 2, 3, 4}, {2, 2}), from_vector<float>({1, 2, 3}, {3, 1}));
      },
      "searchsorted", "sorted_sequence", "first N-1 dimensions of boundaries tensor and input value tensor must match");
  expect_error<ShapeError>(
      [&] {
        searchsorted(from_vector<float>({1, 2, 3, 4}, {2, 2}), Scalar(1));
      },
      "searchsorted", "self", "input value can be a scalar only when boundaries tensor dimension is 1");
  expect_error<DTypeError>([&] { searchsorted(s, from_vector<bool>({true}, {1})); }, "searchsorted", "self",
                           "not implemented for");
  expect_error<DTypeError>(
      [&] {
        searchsorted(from_vector<bool>({false, true}, {2}), floats({1}));
      },
      "searchsorted.Tensor", "sorted_sequence", "bool");
}

TEST_CASE("searchsorted: long sequences against std::lower_bound/upper_bound, 1 and 2 threads") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-100, 100);
  std::vector<float> seq(20000), vals(7777);
  for (auto& x : seq) x = std::round(u(rng));  // many duplicates
  std::sort(seq.begin(), seq.end());
  for (auto& x : vals) x = std::round(u(rng) * 1.1f);
  Tensor s = floats(seq), v = floats(vals);
  const int before = kiln::get_num_threads();
  for (int threads : {1, 2}) {
    kiln::set_num_threads(threads);
    const std::vector<int64_t> left = ints(searchsorted(s, v)), right = ints(searchsorted(s, v, false, true));
    int64_t wrong = 0;
    for (size_t i = 0; i < vals.size(); ++i) {
      wrong += left[i] != std::lower_bound(seq.begin(), seq.end(), vals[i]) - seq.begin();
      wrong += right[i] != std::upper_bound(seq.begin(), seq.end(), vals[i]) - seq.begin();
    }
    CHECK(wrong == 0);
  }
  kiln::set_num_threads(before);
}

namespace {
// searchsorted of `vals` in each row of `rows` ([R, n] as float64 data, cast to dtype) against
// PyTorch's probes (search::bound) on the same rows in the same dtype, left and right.
void check_rows_against_probes(const std::vector<double>& rows, const std::vector<double>& vals, int64_t R,
                               DType dtype) {
  const int64_t n = int64_t(rows.size()) / R, per_row = int64_t(vals.size()) / R;
  Tensor s = from_vector<double>(rows, {R, n}).to(dtype), v = from_vector<double>(vals, {R, per_row}).to(dtype);
  const std::vector<double> sd = s.to(DType::Float64).to_vector<double>();
  const std::vector<double> vd = v.to(DType::Float64).to_vector<double>();
  for (bool right : {false, true}) {
    const std::vector<int64_t> got = ints(searchsorted(s, v, false, right));
    int64_t wrong = 0;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t i = 0; i < per_row; ++i)
        wrong += got[size_t(r * per_row + i)] !=
                 search::bound<double>(sd.data() + r * n, nullptr, n, vd[size_t(r * per_row + i)], right);
    INFO("dtype ", dtype_name(dtype), ", n ", n, ", right ", right);
    CHECK(wrong == 0);
  }
}
}  // namespace

TEST_CASE("searchsorted: rows with more values than places, sorted or not, against PyTorch's probes") {
  // A sorted row without NaN takes the search whose steps are the same for every value; any other
  // row PyTorch's probes. Both must give the probes' answers: NaN and infinite values, values equal
  // to places, duplicates, a tail of fewer than 64 values, 1 and 2 threads.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> u(-60, 60);
  const int before = kiln::get_num_threads();
  for (int threads : {1, 2}) {
    kiln::set_num_threads(threads);
    for (int64_t n : {1, 2, 3, 7, 64, 101, 1000}) {
      const int64_t R = 3, per_row = 2 * n + 67;
      std::vector<double> rows(size_t(R * n)), vals(size_t(R * per_row));
      for (auto& x : rows) x = u(rng);
      for (int64_t r = 0; r < R; ++r) std::sort(rows.begin() + r * n, rows.begin() + (r + 1) * n);
      for (auto& x : vals) x = u(rng) * 1.25;
      vals[0] = kNaN, vals[1] = INFINITY, vals[2] = -INFINITY, vals[size_t(per_row + 5)] = kNaN;
      for (DType dtype : {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Float16}) {
        if (dtype == DType::Int64 || dtype == DType::Int32) {
          std::vector<double> finite = vals;
          for (auto& x : finite) x = std::isfinite(x) ? std::floor(x) : 7;
          check_rows_against_probes(rows, finite, R, dtype);
        } else {
          check_rows_against_probes(rows, vals, R, dtype);
        }
      }
      // the middle row unsorted, the last one with a NaN place: PyTorch's probes, as before
      std::vector<double> mixed = rows;
      if (n > 1) std::swap(mixed[size_t(n)], mixed[size_t(2 * n - 1)]);
      mixed[size_t(2 * n + n / 2)] = kNaN;
      check_rows_against_probes(mixed, vals, R, DType::Float32);
    }
  }
  kiln::set_num_threads(before);
}

TEST_CASE("bucketize: tensor and scalar forms, right, errors") {
  Tensor b = longs({1, 2});
  expect_values(bucketize(from_vector<int64_t>({1, 5, 0, 2}, {2, 2}), b, false, true), {2, 2}, {1, 2, 0, 2});
  CHECK(ints(bucketize(floats({NAN, 1}), floats({1, 2}))) == std::vector<int64_t>{2, 0});
  Tensor three = bucketize(Scalar(3), b);
  CHECK(three.dim() == 0);
  CHECK(three.item<int64_t>() == 2);
  CHECK(bucketize(floats({1.5f}), b, true).dtype() == DType::Int32);
  Tensor out = empty({5}, DType::Int64);
  bucketize_out(out, longs({0, 1, 2, 3}), b);
  CHECK(ints(out) == std::vector<int64_t>{0, 0, 1, 2});
  expect_error<ShapeError>(
      [&] {
        bucketize(longs({1}), from_vector<int64_t>({1, 2}, {1, 2}));
      },
      "bucketize", "boundaries", "boundaries tensor must be 1 dimension, but got dim(2)");
  expect_error<ShapeError>([&] { bucketize(longs({1}), from_vector<int64_t>({2}, {})); }, "bucketize", "boundaries",
                           "but got dim(0)");
}

TEST_CASE("histc: range from the data, edges, NaN (the first bin, as PyTorch 1.13 CPU), empty, dtypes") {
  expect_values(histc(floats({0, 1, 2, 3, 4}), 4, 1, 3), {4}, {1, 0, 1, 1});  // outside ignored, max in the last bin
  expect_values(histc(floats({1, 1, 1}), 4), {4}, {0, 0, 3, 0});              // equal extremes: [min - 1, max + 1]
  expect_values(histc(floats({1, 2, 3, 4}), 2, 1, 1), {2}, {2, 2});           // min == max: the data's range
  expect_values(histc(floats({0.5f, 1.5f, 2.5f, 3, NAN, -1}), 3, 0, 3), {3}, {2, 1, 2});  // NaN: the first bin
  expect_values(histc(floats({NAN, NAN, 1.5f}), 3, 0, 3), {3}, {2, 1, 0});
  expect_values(histc(floats({}), 4), {4}, {0, 0, 0, 0});
  Tensor h = histc(from_vector<double>({1, 2, 3}, {3}), 4);
  CHECK(h.dtype() == DType::Float64);
  expect_values(h, {4}, {1, 0, 1, 1});
  Tensor hb = histc(floats({1, 2, 3}).to(DType::BFloat16), 3);
  CHECK(hb.dtype() == DType::BFloat16);
  expect_values(hb, {3}, {1, 1, 1});
  // [1, 1.001] rounds to [1, 1] in bfloat16: PyTorch 1.13 counts the 1s in the first bin
  expect_values(histc(floats({1, 1, 0.5f}).to(DType::BFloat16), 4, 1, 1.001), {4}, {2, 0, 0, 0});
  expect_values(histc(floats({3e38f, 1, -3e38f}), 3, -3.4e38, 3.4e38), {3}, {3, 0, 0});  // the width overflows
  // non-contiguous input
  Tensor m = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  expect_values(histc(m.t(), 3, 0, 6), {3}, {2, 2, 2});
  Tensor out = empty({1}, DType::Float32);
  histc_out(out, floats({0, 1, 2, 3}), 2);
  expect_values(out, {2}, {2, 2});
}

TEST_CASE("histc: errors with PyTorch's messages") {
  Tensor x = floats({1, 2, 3});
  expect_error<ValueError>([&] { histc(x, 0); }, "histc", "bins", "bins must be > 0, but got 0");
  expect_error<ValueError>([&] { histc(x, 4, 3, 1); }, "histc", "max", "torch.histc: max must be larger than min");
  expect_error<ValueError>([&] { histc(x, 4, 0, INFINITY); }, "histc", "max", "is not finite");
  expect_error<ValueError>([&] { histc(floats({1, 2, NAN}), 4); }, "histc", "self", "is not finite");
  expect_error<ValueError>([&] { histc(floats({1, INFINITY}), 4); }, "histc", "self", "is not finite");
  expect_error<DTypeError>([&] { histc(longs({1, 2}), 4); }, "histc", "self", "int64");
}

TEST_CASE("histc: many elements against a plain count, the same at 1 and 2 threads") {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> data(300000);
  for (auto& x : data) x = normal(rng);
  std::vector<double> want(50, 0);
  for (float x : data)
    if (x >= -2.0f && x <= 2.0f) want[size_t(std::min<int64_t>(int64_t((x + 2.0f) * 50.0f / 4.0f), 49))] += 1;
  Tensor t = floats(data);
  const int before = kiln::get_num_threads();
  kiln::set_num_threads(1);
  Tensor one = histc(t, 50, -2, 2);
  kiln::set_num_threads(2);
  Tensor two = histc(t, 50, -2, 2);
  kiln::set_num_threads(before);
  expect_values(one, {50}, want, 0);
  CHECK(one.to_vector<float>() == two.to_vector<float>());
}

TEST_CASE("bincount: counts, minlength, weights' dtypes, empty input, int dtypes") {
  CHECK(ints(bincount(longs({0, 1, 1, 3}))) == std::vector<int64_t>{1, 2, 0, 1});
  CHECK(ints(bincount(longs({0, 1, 1, 3}), Tensor(), 6)) == std::vector<int64_t>{1, 2, 0, 1, 0, 0});
  Tensor wf = bincount(from_vector<int8_t>({0, 1, 1, 3}, {4}), floats({0.5f, 0.25f, 0.25f, 2}), 6);
  CHECK(wf.dtype() == DType::Float32);
  expect_values(wf, {6}, {0.5, 0.5, 0, 2, 0, 0});
  Tensor wi = bincount(longs({0, 1, 1, 3}), longs({1, 2, 3, 4}), 2);
  CHECK(wi.dtype() == DType::Float64);  // integer weights sum in float64
  expect_values(wi, {4}, {1, 5, 0, 4});
  Tensor e = bincount(from_vector<int64_t>({}, {0}), floats({}), 3);
  CHECK(e.dtype() == DType::Int64);  // PyTorch 1.13: an empty input gives int64 zeros, weights or not
  CHECK(ints(e) == std::vector<int64_t>{0, 0, 0});
  CHECK(bincount(from_vector<int64_t>({}, {0})).numel() == 0);
  CHECK(ints(bincount(from_vector<uint8_t>({2, 2, 0}, {3}))) == std::vector<int64_t>{1, 0, 2});
  Tensor strided = from_vector<int32_t>({4, 9, 4, 9, 1, 9}, {3, 2}).select(1, 0);
  CHECK(ints(bincount(strided)) == std::vector<int64_t>{0, 1, 0, 0, 2});
}

TEST_CASE("bincount: errors with PyTorch's messages") {
  expect_error<ValueError>(
      [&] {
        bincount(longs({-1, 2}));
      },
      "bincount", "self", "bincount only supports 1-d non-negative integral inputs.");
  expect_error<ValueError>(
      [&] {
        bincount(from_vector<int64_t>({1, 2}, {1, 2}));
      },
      "bincount", "self", "bincount only supports 1-d non-negative integral inputs.");
  expect_error<ValueError>([&] { bincount(longs({1}), Tensor(), -1); }, "bincount", "minlength",
                           "minlength should be >= 0");
  expect_error<ShapeError>(
      [&] {
        bincount(longs({1, 2}), floats({1}));
      },
      "bincount", "weights", "weights should be 1-d and have the same length as input");
  expect_error<DTypeError>([&] { bincount(floats({1})); }, "bincount", "self", "float32");
  // the structured kernel checks every value before writing
  expect_error<IndexError>([&] { _bincount(longs({0, 5}), 3); }, "_bincount", "self", "out of range");
  expect_error<IndexError>([&] { _bincount(longs({0, -1}), 3, floats({1, 1})); }, "_bincount", "self", "out of range");
}

TEST_CASE("bincount: many values against a plain count, the same at 1 and 2 threads") {
  std::mt19937 rng(3);
  std::vector<int64_t> data(200000);
  std::vector<int64_t> want(1000, 0);
  for (auto& x : data) ++want[size_t(x = int64_t(rng() % 1000))];
  Tensor t = longs(data);
  const int before = kiln::get_num_threads();
  kiln::set_num_threads(1);
  CHECK(ints(bincount(t)) == want);
  kiln::set_num_threads(2);
  CHECK(ints(bincount(t)) == want);
  kiln::set_num_threads(before);
}

namespace {
// hist and bin_edges of a torch.histogram call against PyTorch 1.13's values.
void expect_histogram(const std::tuple<Tensor, Tensor>& r, std::vector<double> hist, std::vector<double> edges,
                      double tol = 1e-6) {
  const Tensor& h = std::get<0>(r);  // not a structured binding: C++17 lambdas (INFO) cannot capture one
  const Tensor& e = std::get<1>(r);
  INFO("hist " << h.str() << " bin_edges " << e.str());
  expect_values(h, {int64_t(hist.size())}, hist, tol);
  expect_values(e, {int64_t(edges.size())}, edges, tol);
}
}  // namespace

TEST_CASE("histogram: PyTorch 1.13's values (range, equal values, empty, NaN, weights, density, uneven edges)") {
  const Tensor x = floats({1, 2, 1, 4, 2.5f});
  expect_histogram(histogram(x, 4), {2, 1, 1, 1}, {1, 1.75, 2.5, 3.25, 4});
  expect_histogram(histogram(x, 4, {0.0, 3.0}), {0, 2, 1, 1}, {0, 0.75, 1.5, 2.25, 3});  // 4 is outside
  expect_histogram(histogram(x, 2, {10.0, 20.0}), {0, 0}, {10, 15, 20});
  // equal values: [min - 0.5, max + 0.5], as numpy
  expect_histogram(histogram(floats({2, 2, 2}), 3), {0, 3, 0}, {1.5, 1.8333334, 2.1666667, 2.5});
  expect_histogram(histogram(floats({-3, -3}), 4), {0, 0, 2, 0}, {-3.5, -3.25, -3, -2.75, -2.5});
  // the rightmost edge is inclusive; an element on an inner edge goes right
  expect_histogram(histogram(floats({0, 1.0f / 3, 2.0f / 3, 1}), 3), {1, 1, 2}, {0, 0.3333333, 0.6666666, 1});
  // empty: [0, 1]; its density is 0 / 0
  expect_histogram(histogram(floats({}), 3), {0, 0, 0}, {0, 0.3333333, 0.6666666, 1});
  expect_histogram(histogram(floats({}), 2, std::nullopt, Tensor(), true), {kNaN, kNaN}, {0, 0.5, 1});
  // NaN, as PyTorch 1.13's CPU kernel: bin_ct counts it in bin 1 (bin 0 of one bin), a bins tensor in the last bin
  expect_histogram(histogram(floats({1, NAN, 2}), 3, {0.0, 3.0}), {0, 2, 1}, {0, 1, 2, 3});
  expect_histogram(histogram(floats({NAN, 0.5f, NAN}), 5, {0.0, 1.0}), {0, 2, 1, 0, 0}, {0, 0.2, 0.4, 0.6, 0.8, 1});
  expect_histogram(histogram(floats({NAN, 0.5f}), 1, {0.0, 1.0}), {2}, {0, 1});
  expect_histogram(histogram(floats({NAN, 0.5f, 1}), 2, {0.0, 1.0}, Tensor(), true), {0, 2}, {0, 0.5, 1});
  expect_histogram(histogram(floats({1, NAN, 2, 3}), floats({0, 1, 2, 3})), {0, 1, 3}, {0, 1, 2, 3});
  expect_histogram(histogram(floats({NAN, 0.5f, 1.5f, 7}), floats({0, 1, 2}), floats({4, 1, 1, 1})), {1, 5}, {0, 1, 2});
  expect_histogram(histogram(floats({NAN, 0.5f}), floats({0, 2, 1})), {1, 1}, {0, 2, 1});
  // weights, density
  expect_histogram(histogram(x, 4, std::nullopt, floats({1, 2, 3, 4, 5})), {4, 2, 5, 4}, {1, 1.75, 2.5, 3.25, 4});
  expect_histogram(histogram(x, 4, std::nullopt, Tensor(), true), {0.5333334, 0.2666667, 0.2666667, 0.2666667},
                   {1, 1.75, 2.5, 3.25, 4});
  expect_histogram(histogram(x, floats({0, 2, 5}), floats({1, 2, 3, 4, 5}), true), {0.1333333, 0.2444444}, {0, 2, 5});
  // weight of any shape with self's element count
  expect_histogram(
      histogram(from_vector<float>({1, 2, 3, 4}, {2, 2}), 2, std::nullopt, from_vector<float>({1, 1, 2, 2}, {4, 1})),
      {2, 4}, {1, 2.5, 4});
  // uneven edges, a repeated edge (the element on it goes to the right of the two)
  expect_histogram(histogram(floats({-3, 0, 0.1f, 0.5f, 0.99f, 1, 7, 10, 10.5f}), floats({0, 0.1f, 1, 10})), {1, 3, 3},
                   {0, 0.1, 1, 10});
  expect_histogram(histogram(x, floats({0, 2, 2, 5})), {2, 0, 3}, {0, 2, 2, 5});
  // unsorted edges, NaN or inf among them: PyTorch's binary search over them, counted when edges[0] <= x <= edges[n]
  expect_histogram(histogram(x, floats({3, 1, 2})), {0, 0}, {3, 1, 2});
  expect_histogram(histogram(floats({-1, 0, 1, 4, 9, 10}), floats({0, -5, 10})), {0, 5}, {0, -5, 10});
  expect_histogram(histogram(x, floats({0, 1, NAN, 5})), {0, 0, 5}, {0, 1, kNaN, 5});
  expect_histogram(histogram(floats({0.5f, 1.5f, -3}), floats({NAN, 1, 2})), {2, 1}, {kNaN, 1, 2});
  expect_histogram(histogram(floats({0.5f, 1.5f, 7}), floats({0, 1, NAN})), {1, 2}, {0, 1, kNaN});
  expect_histogram(histogram(floats({INFINITY, 1, -1}), floats({0, INFINITY})), {2}, {0, INFINITY});
  // dtypes: hist and bin_edges have self's
  auto [h64, e64] = histogram(x.to(DType::Float64), 3);
  CHECK(h64.dtype() == DType::Float64);
  CHECK(e64.dtype() == DType::Float64);
  expect_histogram({h64, e64}, {2, 2, 1}, {1, 2, 3, 4});
  auto [hb, eb] = histogram(x.to(DType::BFloat16), floats({0, 1, 3, 5}).to(DType::BFloat16));
  CHECK(hb.dtype() == DType::BFloat16);
  expect_histogram({hb, eb}, {0, 4, 1}, {0, 1, 3, 5});
  expect_histogram(histogram(x.to(DType::BFloat16), 3, {1.0, 4.0}), {2, 2, 1}, {1, 2, 3, 4});
  // bin_edges is a copy of bins; the method and call-by-name
  const Tensor bins = floats({0, 2, 5});
  auto [hm, em] = x.histogram(bins);
  CHECK(em.data_ptr() != bins.data_ptr());
  expect_values(hm, {2}, {2, 3});
  expect_histogram(x.histogram(2), {3, 2}, {1, 2.5, 4});
  const std::vector<Value> by_name =
      call("histogram", {x, 4}, {{"range", Value(std::vector<double>{0, 3})}}).to_tuple();
  expect_values(by_name[0].to_tensor(), {4}, {0, 2, 1, 1});
  const std::vector<Value> by_ints =
      call("histogram", {x, 4}, {{"range", Value(std::vector<int64_t>{0, 3})}}).to_tuple();
  expect_values(by_ints[1].to_tensor(), {5}, {0, 0.75, 1.5, 2.25, 3});
  expect_values(call("histogram", {x, bins}).to_tuple()[0].to_tensor(), {2}, {2, 3});
}

TEST_CASE("histogram: no gradient (its outputs do not require grad)") {
  Tensor x = floats({1, 2, 3});
  x.requires_grad_(true);
  auto [h, e] = histogram(x, 2, std::nullopt, floats({1, 1, 1}).requires_grad_(true));
  CHECK_FALSE(h.requires_grad());
  CHECK_FALSE(e.requires_grad());
}

TEST_CASE("histogram: errors with PyTorch's messages") {
  const Tensor x = floats({1, 2, 3});
  expect_error<ValueError>([&] { histogram(x, 0); }, "histogram.bin_ct", "bins",
                           "torch.histogram(): bins must be > 0, but got 0 for dimension 0");
  expect_error<ValueError>([&] { histogram(x, -2); }, "histogram.bin_ct", "bins", "bins must be > 0, but got -2");
  expect_error<ValueError>(
      [&] {
        histogram(x, 3, {3.0, 1.0});
      },
      "histogram.bin_ct", "range", "torch.histogramdd: min should not exceed max, but got min 3 max 1 for dimension 0");
  expect_error<ValueError>(
      [&] {
        histogram(x, 3, {1.0, INFINITY});
      },
      "histogram.bin_ct", "range", "torch.histogramdd: dimension 0's range [1, inf] is not finite");
  expect_error<ValueError>(
      [&] {
        histogram(floats({1, NAN}), 3);
      },
      "histogram.bin_ct", "self", "range [nan, nan] is not finite");
  expect_error<ValueError>(
      [&] {
        histogram(floats({1, INFINITY}), 3);
      },
      "histogram.bin_ct", "self", "range [1, inf] is not finite");
  expect_error<ValueError>(
      [&] {
        histogram(x, 3, {1.0, 2.0, 3.0});
      },
      "histogram.bin_ct", "range",
      "torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, but got 3");
  expect_error<ShapeError>(
      [&] {
        histogram(x, 3, std::nullopt, floats({1, 1}));
      },
      "histogram.bin_ct", "weight",
      "should have the same shape as the input tensor excluding its innermost dimension, but got "
      "input with shape [3, 1] and weight with shape [2]");
  expect_error<DTypeError>(
      [&] {
        histogram(x, 3, std::nullopt, floats({1, 1, 1}).to(DType::Float64));
      },
      "histogram.bin_ct", "weight", "input tensor and weight tensor should have the same dtype");
  expect_error<DTypeError>(
      [&] {
        histogram(x, floats({0, 1}).to(DType::Float64));
      },
      "histogram.bins_tensor", "bins", "input tensor and bins tensors should have the same dtype");
  expect_error<ShapeError>(
      [&] {
        histogram(x, from_vector<float>({0, 1, 2, 3}, {2, 2}));
      },
      "histogram.bins_tensor", "bins",
      "bins tensor should have one dimension, but got 2 dimensions in the bins tensor");
  expect_error<ShapeError>([&] { histogram(x, full({}, 1.0, DType::Float32)); }, "histogram.bins_tensor", "bins",
                           "but got 0 dimensions");
  expect_error<ValueError>([&] { histogram(x, floats({})); }, "histogram.bins_tensor", "bins",
                           "bins tensor should have at least 1 element, but got 0 elements");
  expect_error<ValueError>([&] { histogram(x, floats({2})); }, "histogram.bins_tensor", "bins",
                           "bins must be > 0, but got 0");
  expect_error<DTypeError>([&] { histogram(longs({1, 2}), 3); }, "histogram.bin_ct", "self", "int64");
  expect_error<DTypeError>([&] { histogram(longs({1, 2}), longs({0, 3})); }, "histogram.bins_tensor", "self", "int64");
}

TEST_CASE("histogram: many elements (and a NaN) against a plain upper_bound count, the same at 1 and 2 threads") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> data(300000);
  for (auto& x : data) x = normal(rng);
  data[7] = NAN;
  const Tensor t = floats(data);
  const Tensor uneven = floats({-2.5f, -1, -0.3f, 0, 0.01f, 0.5f, 2, 2, 3});
  for (int bins_kind = 0; bins_kind < 2; ++bins_kind) {
    const int before = kiln::get_num_threads();
    kiln::set_num_threads(1);
    auto [one, edges] = bins_kind == 0 ? histogram(t, 50, {-2.0, 2.0}) : histogram(t, uneven);
    kiln::set_num_threads(2);
    auto [two, edges2] = bins_kind == 0 ? histogram(t, 50, {-2.0, 2.0}) : histogram(t, uneven);
    kiln::set_num_threads(before);
    const std::vector<float> e = edges.to_vector<float>();
    const size_t n = e.size() - 1;
    std::vector<double> want(n, 0);
    for (float x : data) {
      if (std::isnan(x)) {  // PyTorch 1.13's CPU bins: 1 of bin_ct, the last of a bins tensor
        want[bins_kind == 0 ? 1 : n - 1] += 1;
        continue;
      }
      if (x < e.front() || x > e.back()) continue;
      const size_t pos = size_t(std::upper_bound(e.begin(), e.end(), x) - e.begin()) - 1;
      want[std::min(pos, n - 1)] += 1;
    }
    expect_values(one, {int64_t(n)}, want, 0);
    CHECK(one.to_vector<float>() == two.to_vector<float>());
  }
}
