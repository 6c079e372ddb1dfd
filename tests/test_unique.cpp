// unique, unique_dim, unique_consecutive, quantile/nanquantile and repeat_interleave with tensor
// repeats beyond what the generated samples reach: NaN, empty and 0-d inputs, bool, the flags
// that leave inverse/counts empty, dims of non-contiguous tensors, every interpolation, q's
// shapes, output_size, gradients and typed errors. Values are PyTorch 1.13's on the same inputs,
// except unique's NaN (see the NaN case) and sorted=False (kiln always sorts).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_unique2.h"
#include "kiln/gen/api/combinations.h"
#include "kiln/gen/api/nanquantile.h"
#include "kiln/gen/api/quantile.h"
#include "kiln/gen/api/repeat_interleave.h"
#include "kiln/gen/api/unique.h"
#include "kiln/gen/api/unique_consecutive.h"
#include "kiln/gen/api/unique_dim.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
Tensor i64(std::vector<int64_t> v, std::vector<int64_t> shape) { return from_vector(v, shape); }
Tensor f32(std::vector<float> v, std::vector<int64_t> shape) { return from_vector(v, shape); }
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

void expect_empty_long(const Tensor& t) {
  CHECK(t.dtype() == kInt64);
  CHECK(t.sizes().vec() == std::vector<int64_t>{0});
}
}  // namespace

TEST_CASE("unique: sorted values, inverse of self's shape, counts, empty int64 slots when not asked") {
  Tensor x = i64({3, 1, 2, 3, 1, 0, 3, 2}, {2, 4});
  auto [out, inv, cnt] = kiln::unique(x, /*sorted=*/true, /*return_inverse=*/true, /*return_counts=*/true);
  expect_values(out, {4}, {0, 1, 2, 3});
  expect_values(inv, {2, 4}, {3, 1, 2, 3, 1, 0, 3, 2});
  expect_values(cnt, {4}, {1, 2, 2, 3});
  CHECK(out.dtype() == kInt64);
  auto [o2, i2, c2] = _unique2(x, /*sorted=*/false);  // kiln sorts anyway
  expect_values(o2, {4}, {0, 1, 2, 3});
  expect_empty_long(i2);
  expect_empty_long(c2);
  // non-contiguous input; as PyTorch 1.13, counts bring the inverse with them
  auto [o3, i3, c3] = _unique2(x.t(), true, false, true);
  expect_values(o3, {4}, {0, 1, 2, 3});
  expect_values(i3, {4, 2}, {3, 1, 1, 0, 2, 3, 3, 2});
  expect_values(c3, {4}, {1, 2, 2, 3});
}

TEST_CASE("unique: NaN sorts last and each NaN is its own value, bool, 0-d and empty inputs") {
  // PyTorch 1.13's CPU hash set gives [0, 1, nan, nan, 3] with counts [1, 1, 0, 0, 2] here; kiln
  // keeps sort's order (NaN last) and counts each NaN once, as NaN != NaN.
  Tensor x = f32({3, NAN, 1, 3, NAN, 0}, {6});
  auto [out, inv, cnt] = _unique2(x, true, true, true);
  expect_values(out, {5}, {0, 1, 3, kNaN, kNaN});
  expect_values(inv, {6}, {2, 3, 1, 2, 4, 0});
  expect_values(cnt, {5}, {1, 1, 2, 1, 1});

  auto [bo, bi, bc] = _unique2(from_vector<bool>({true, false, true}, {3}), true, true, true);
  CHECK(bo.dtype() == kBool);
  expect_values(bo, {2}, {0, 1});
  expect_values(bi, {3}, {1, 0, 1});
  expect_values(bc, {2}, {1, 2});

  auto [so, si, sc] = _unique2(scalar_tensor(5.0), true, true, true);
  expect_values(so, {1}, {5});
  expect_values(si, {}, {0});
  expect_values(sc, {1}, {1});

  auto [eo, ei, ec] = _unique2(zeros({0, 3}), true, true, true);
  expect_values(eo, {0}, {});
  CHECK(ei.sizes().vec() == std::vector<int64_t>{0, 3});
  expect_values(ec, {0}, {});
}

namespace {
// unique of `data` as `dtype` ([2, n / 2]) against std::map: values, counts and the inverse.
void check_against_map(const std::vector<int64_t>& data, DType dtype) {
  std::map<int64_t, int64_t> counts;
  for (int64_t d : data) ++counts[d];
  std::vector<int64_t> want_values, want_counts;
  std::map<int64_t, int64_t> rank;
  for (auto [v, c] : counts) {
    rank[v] = int64_t(want_values.size());
    want_values.push_back(v);
    want_counts.push_back(c);
  }
  const int64_t n = int64_t(data.size());
  auto [out, inv, cnt] = _unique2(i64(data, {2, n / 2}).to(dtype), true, true, true);
  CHECK(out.dtype() == dtype);
  CHECK(ints(out.to(kInt64)) == want_values);
  CHECK(ints(cnt) == want_counts);
  CHECK(inv.sizes().vec() == std::vector<int64_t>{2, n / 2});
  std::vector<int64_t> want_inv;
  for (int64_t d : data) want_inv.push_back(rank[d]);
  CHECK(ints(inv) == want_inv);
  auto [values_only, no_inv, no_counts] = _unique2(i64(data, {2, n / 2}).to(dtype), true, false, false);
  CHECK(ints(values_only.to(kInt64)) == want_values);
  expect_empty_long(no_inv);
  expect_empty_long(no_counts);
}
}  // namespace

TEST_CASE("unique: 100k int64 with duplicates against std::map (values, counts, inverse)") {
  std::mt19937 rng(5);
  std::vector<int64_t> narrow(100000), wide(100000);
  for (auto& d : narrow) d = int64_t(rng() % 3000) - 1500;         // counted
  for (auto& d : wide) d = (int64_t(rng() % 30000) - 15000) * (int64_t(1) << 40);  // sorted
  check_against_map(narrow, kInt64);
  check_against_map(wide, kInt64);
}

TEST_CASE("unique: integers are counted when their range is no wider than their count, else sorted") {
  std::mt19937 rng(9);
  // int8 over its whole range, 1000 values: counted through int64 offsets (127 - -128 overflows int8)
  std::vector<int64_t> bytes(1000);
  for (auto& d : bytes) d = int64_t(rng() % 256) - 128;
  bytes[0] = -128;
  bytes[1] = 127;
  check_against_map(bytes, kInt8);
  check_against_map(std::vector<int64_t>(bytes.begin(), bytes.begin() + 200), kInt8);  // 256 wide: sorted
  std::vector<int64_t> small(bytes.size());
  for (size_t i = 0; i < small.size(); ++i) small[i] = bytes[i] + 128;
  check_against_map(small, kUInt8);
  // a span of n - 1 is counted, a span of n sorted: both give the same answers
  std::vector<int64_t> edge = {7, 56, 30, 7, 8, 55, 9, 9, 40, 7};
  for (int64_t top : {int64_t(10), int64_t(11)}) {
    std::vector<int64_t> e = edge;
    for (auto& d : e) d = 7 + (d - 7) % top;
    e[1] = 7 + top - 1;
    check_against_map(e, kInt32);
  }
  // the widest int64 span: max - min overflows int64, so it is compared unsigned and sorted
  check_against_map({std::numeric_limits<int64_t>::max(), 0, std::numeric_limits<int64_t>::min(), 0}, kInt64);
  check_against_map({-3, -3, -1, -2}, kInt64);  // negative values, counted
  // counted at either end of int64: the offsets from the minimum wrap back into [0, span)
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  check_against_map({lo + 1, lo, lo + 1, lo + 1}, kInt64);
  check_against_map({hi, hi - 2, hi, hi - 1}, kInt64);
}

TEST_CASE("unique_dim and unique(dim=): distinct slices in lexicographic order") {
  Tensor x = i64({1, 2, 0, 5, 1, 2}, {3, 2});
  auto [out, inv, cnt] = unique_dim(x, 0, true, true, true);
  expect_values(out, {2, 2}, {0, 5, 1, 2});
  expect_values(inv, {3}, {1, 0, 1});
  expect_values(cnt, {2}, {1, 2});
  auto [to, ti, tc] = kiln::unique(x.t(), true, true, true, /*dim=*/1);  // the same slices as columns
  expect_values(to, {2, 2}, {0, 1, 5, 2});
  expect_values(ti, {3}, {1, 0, 1});
  expect_values(tc, {2}, {1, 2});
  // PyTorch's unique_dim returns inverse and counts even when not asked
  auto [ro, ri, rc] = unique_dim(i64({2, 1, 2, 1, 1, 1}, {2, 3}), -1);
  expect_values(ro, {2, 2}, {1, 2, 1, 1});
  expect_values(ri, {3}, {1, 0, 1});
  expect_values(rc, {2}, {1, 2});
  auto [eo, ei, ec] = unique_dim(zeros({0, 3}), 0, true, true, true);
  CHECK(eo.sizes().vec() == std::vector<int64_t>{0, 3});
  expect_empty_long(ei);
  expect_empty_long(ec);
  CHECK(has(error_text<ValueError>([&] { unique_dim(zeros({3, 0}), 0); }), "aren't selected"));
  CHECK(has(error_text<ValueError>([&] { unique_dim(zeros({0, 0}), 0); }), "more than one"));
  CHECK(has(error_text<IndexError>([&] { unique_dim(scalar_tensor(3.0), 0); }), "no dimensions"));
  CHECK(has(error_text<IndexError>([&] { unique_dim(zeros({2, 3}), 2); }), "unique_dim"));
}

TEST_CASE("unique_consecutive: runs collapsed, flat and along a dim") {
  auto [out, inv, cnt] = unique_consecutive(i64({1, 1, 2, 2, 3, 1, 1, 2}, {8}), true, true);
  expect_values(out, {5}, {1, 2, 3, 1, 2});
  expect_values(inv, {8}, {0, 0, 1, 1, 2, 3, 3, 4});
  expect_values(cnt, {5}, {2, 2, 1, 2, 1});
  // [[1, 2], [1, 2], [3, 4]] transposed: columns 0 and 1 are one run
  auto [co, ci, cc] = unique_consecutive(i64({1, 2, 1, 2, 3, 4}, {3, 2}).t(), true, true, 1);
  expect_values(co, {2, 2}, {1, 3, 2, 4});
  expect_values(ci, {3}, {0, 0, 1});
  expect_values(cc, {2}, {2, 1});
  auto [no, ni, nc] = unique_consecutive(f32({1, NAN, NAN, 1}, {4}), true, true);  // as PyTorch
  expect_values(no, {4}, {1, kNaN, kNaN, 1});
  expect_values(nc, {4}, {1, 1, 1, 1});
  auto [fo, fi, fc] = unique_consecutive(i64({4, 4, 1}, {3}), false, true);  // flat: the flags hold
  expect_empty_long(fi);
  expect_values(fc, {2}, {2, 1});
  CHECK(has(error_text<IndexError>([&] { unique_consecutive(scalar_tensor(3.0), true, true, 0); }), "no dimensions"));
}

TEST_CASE("unique: complex and float16 are refused as PyTorch 1.13's CPU does (DTypeError)") {
  CHECK(has(error_text<DTypeError>([&] { _unique2(zeros({2}, kFloat16)); }), "_unique2"));
  CHECK(has(error_text<DTypeError>([&] { kiln::unique(zeros({2}, kComplex64)); }), "unique"));
}

TEST_CASE("quantile: every interpolation, with PyTorch 1.13's values") {
  Tensor x = f32({1, 7, 3, 5}, {4});
  Tensor q = f32({0, 0.25f, 0.5f, 1}, {4});
  expect_values(quantile(x, q), {4}, {1, 2.5, 4, 7});
  expect_values(quantile(x, q, std::nullopt, false, "lower"), {4}, {1, 1, 3, 7});
  expect_values(quantile(x, q, std::nullopt, false, "higher"), {4}, {1, 3, 5, 7});
  expect_values(quantile(x, q, std::nullopt, false, "midpoint"), {4}, {1, 2, 4, 7});
  expect_values(quantile(x, q, std::nullopt, false, "nearest"), {4}, {1, 3, 5, 7});
  // nearest rounds half to even: ranks 0.5, 1.5, 2.5, 3.5
  expect_values(quantile(arange(5.0), f32({0.125f, 0.375f, 0.625f, 0.875f}, {4}), std::nullopt, false, "nearest"), {4},
                {0, 2, 2, 4});
}

TEST_CASE("quantile and nanquantile: NaN lines, q's dim first, keepdim, 0-d self") {
  Tensor x = f32({1, 7, 3, 5, 2, 2, 8, NAN}, {2, 4});
  Tensor q = f32({0, 0.25f, 0.5f, 1}, {4});
  expect_values(quantile(x, 0.5, 1), {2}, {4, kNaN});
  expect_values(nanquantile(x, q, 1), {4, 2}, {1, 2, 2.5, 2, 4, 2, 7, 8});
  expect_values(nanquantile(x, q, 1, false, "midpoint"), {4, 2}, {1, 2, 2, 2, 4, 2, 7, 8});
  CHECK(quantile(x, q, 1, true).sizes().vec() == std::vector<int64_t>{4, 2, 1});
  CHECK(quantile(x, 0.5, std::nullopt, true).sizes().vec() == std::vector<int64_t>{1, 1});
  CHECK(quantile(x, q).sizes().vec() == std::vector<int64_t>{4});
  expect_values(nanquantile(f32({NAN, NAN}, {2}), 0.5), {}, {kNaN});
  expect_values(quantile(scalar_tensor(3.0), 0.3, 0, true), {}, {3});
  CHECK(quantile(scalar_tensor(3.0), f32({0.3f}, {1}), 0).sizes().vec() == std::vector<int64_t>{1});
  // a non-contiguous self along dim 0
  expect_values(quantile(x.t(), 0.5, 0), {2}, {4, kNaN});
}

TEST_CASE("quantile: the gradient reaches the two values around each rank") {
  Tensor x = from_vector<double>({1, 7, 3, 5}, {4}).requires_grad_();
  quantile(x, 0.5).backward();
  expect_values(x.grad(), {4}, {0, 0, 0.5, 0.5});
  Tensor y = from_vector<double>({4, 1, 2}, {3}).requires_grad_();
  nanquantile(y, 0.25, std::nullopt, false, "lower").backward();
  expect_values(y.grad(), {3}, {0, 1, 0});
}

TEST_CASE("quantile: typed errors with PyTorch's messages naming the op and argument") {
  Tensor x = f32({1, 2, 3}, {3});
  CHECK(has(error_text<ValueError>([&] { quantile(x, 1.5); }), "q must be in the range [0, 1] but got 1.5"));
  CHECK(has(error_text<ValueError>([&] { nanquantile(x, f32({0.5f, 2}, {2})); }), "q values must be in the range"));
  CHECK(has(error_text<DTypeError>([&] { quantile(x, from_vector<double>({0.5}, {1})); }), "same dtype"));
  CHECK(has(error_text<ShapeError>([&] { quantile(x, full({2, 2}, 0.5)); }), "scalar or 1D"));
  CHECK(has(error_text<ValueError>([&] { quantile(zeros({0}), 0.5); }), "non-empty"));
  CHECK(has(error_text<ValueError>([&] { quantile(x, 0.5, std::nullopt, false, "foo"); }), "but got foo"));
  CHECK(has(error_text<DTypeError>([&] { quantile(i64({1, 2}, {2}), 0.5); }), "quantile"));
  CHECK(has(error_text<IndexError>([&] { quantile(x, 0.5, 1); }), "quantile"));
}

TEST_CASE("repeat_interleave with tensor repeats: the indices form, self along a dim, output_size") {
  expect_values(repeat_interleave(i64({2, 0, 3, 1}, {4})), {6}, {0, 0, 2, 2, 2, 3});
  Tensor r32 = repeat_interleave(from_vector<int32_t>({1, 2}, {2}));
  CHECK(r32.dtype() == kInt32);
  expect_values(r32, {3}, {0, 1, 1});
  expect_values(repeat_interleave(i64({}, {0})), {0}, {});
  expect_values(repeat_interleave(i64({0, 0}, {2})), {0}, {});
  Tensor x = i64({1, 2, 3, 4}, {2, 2});
  expect_values(repeat_interleave(x, i64({1, 2}, {2}), 0), {3, 2}, {1, 2, 3, 4, 3, 4});
  expect_values(repeat_interleave(x.t(), i64({1, 2}, {2}), 1), {2, 3}, {1, 3, 3, 2, 4, 4});  // non-contiguous
  expect_values(repeat_interleave(x, i64({2}, {}), std::nullopt, 8), {8}, {1, 1, 2, 2, 3, 3, 4, 4});
  expect_values(x.repeat_interleave(i64({0, 1, 2, 0}, {4})), {3}, {2, 3, 3});
}

TEST_CASE("repeat_interleave with tensor repeats: gradient sums each repeated group") {
  Tensor x = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  (repeat_interleave(x, i64({2, 0, 3}, {3})) * from_vector<double>({1, 2, 3, 4, 5}, {5})).sum().backward();
  expect_values(x.grad(), {3}, {3, 0, 12});
}

TEST_CASE("repeat_interleave with tensor repeats: typed errors") {
  CHECK(has(error_text<ValueError>([&] { repeat_interleave(i64({1, -1}, {2})); }), "repeats can not be negative"));
  CHECK(has(error_text<ValueError>([&] {
              repeat_interleave(i64({1, -1}, {2}), std::optional<int64_t>(0));
            }),
            "negative"));
  CHECK(has(error_text<DTypeError>([&] { repeat_interleave(f32({1, 2}, {2})); }), "repeat_interleave"));
  CHECK(has(error_text<ShapeError>([&] { repeat_interleave(i64({1}, {1, 1})); }), "1D vector"));
  CHECK(has(error_text<ValueError>([&] {
              repeat_interleave(i64({1, 2}, {2}), std::optional<int64_t>(4));
            }),
            "does not match"));
  CHECK(has(error_text<ShapeError>([&] { repeat_interleave(ones({3}), i64({1, 2}, {2}), 0); }), "same size"));
  CHECK(has(error_text<ShapeError>([&] { repeat_interleave(ones({3}), i64({1}, {1, 1}), 0); }), "0-dim or 1-dim"));
  CHECK(has(error_text<IndexError>([&] { repeat_interleave(scalar_tensor(1.0), i64({1}, {1}), 0); }), "no dimensions"));
}

TEST_CASE("combinations: PyTorch's order, with replacement, r = 0 and r > len, gradient, typed errors") {
  Tensor x = i64({1, 2, 3, 4}, {4});
  expect_values(combinations(x), {6, 2}, {1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4});
  Tensor w = combinations(x, 3, true);
  CHECK(w.sizes().vec() == std::vector<int64_t>{20, 3});
  expect_values(w.narrow(0, 0, 6), {6, 3}, {1, 1, 1, 1, 1, 2, 1, 1, 3, 1, 1, 4, 1, 2, 2, 1, 2, 3});
  CHECK(combinations(i64({1, 2}, {2}), 3).sizes().vec() == std::vector<int64_t>{0, 3});
  expect_values(combinations(x, 0), {0}, {});
  Tensor g = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  combinations(g).sum().backward();
  expect_values(g.grad(), {3}, {2, 2, 2});
  CHECK(has(error_text<ShapeError>([&] { combinations(ones({2, 2})); }), "Expect a 1D vector, but got shape"));
  CHECK(has(error_text<ValueError>([&] { combinations(x, -1); }), "non-negative number"));
  // A huge r is counted before anything is allocated (a fuzz finding): none exist, or too many.
  const int64_t huge = std::numeric_limits<int64_t>::max();
  CHECK(combinations(x, huge).sizes().vec() == std::vector<int64_t>{0, huge});
  CHECK(combinations(i64({}, {0}), 5, true).sizes().vec() == std::vector<int64_t>{0, 5});
  CHECK(has(error_text<ValueError>([&] { combinations(x, huge, true); }), "too many combinations"));
  CHECK(has(error_text<ValueError>([&] { combinations(i64({7}, {1}), int64_t(1) << 41, true); }),
            "too many combinations"));
  expect_values(combinations(i64({7}, {1}), 3, true), {1, 3}, {7, 7, 7});
}
