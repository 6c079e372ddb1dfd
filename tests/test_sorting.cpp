// The sorting ops beyond what the generated samples reach: NaN's place, stability with
// duplicates, descending order, k errors, 0-d and empty inputs, and lines long enough for the
// radix path, checked against a std::stable_sort of the same keys computed here. Values with
// NaN are PyTorch 1.13's (torch.sort, median, nanmedian, mode on the same inputs).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>
#include "kiln/core.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/argsort.h"
#include "kiln/gen/api/kthvalue.h"
#include "kiln/gen/api/median.h"
#include "kiln/gen/api/mode.h"
#include "kiln/gen/api/msort.h"
#include "kiln/gen/api/nanmedian.h"
#include "kiln/gen/api/sort.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/topk.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;
using kiln::testing::same_values;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

// PyTorch's order as a comparison: NaN above everything, -0 == +0.
bool before(double a, double b, bool descending) {
  if (std::isnan(a) || std::isnan(b))
    return descending ? (std::isnan(a) && !std::isnan(b)) : (!std::isnan(a) && std::isnan(b));
  return descending ? a > b : a < b;
}

// The stable sort of one line: its order of indices.
std::vector<int64_t> stable_order(const std::vector<double>& line, bool descending) {
  std::vector<int64_t> order(line.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return before(line[size_t(a)], line[size_t(b)], descending); });
  return order;
}

// Same indices, and values equal (NaN equal to NaN).
void expect_sorted(const Tensor& values, const Tensor& indices, const std::vector<double>& line, bool descending,
                   int64_t take) {
  const std::vector<int64_t> order = stable_order(line, descending);
  const std::vector<int64_t> got = ints(indices);
  const std::vector<double> vals = values.to_vector<double>();
  REQUIRE(int64_t(got.size()) == take);
  int64_t wrong = 0;
  for (int64_t j = 0; j < take; ++j) {
    const double want = line[size_t(order[size_t(j)])];
    const bool same = std::isnan(want) ? std::isnan(vals[size_t(j)]) : vals[size_t(j)] == want;
    wrong += got[size_t(j)] != order[size_t(j)] || !same;
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("sort: NaN last ascending, first descending, -0 and +0 keep their order") {
  Tensor x = from_vector<float>({3, NAN, 1, 2}, {4});
  auto [v, i] = sort(x);
  expect_values(v, {4}, {1, 2, 3, kNaN});
  CHECK(ints(i) == std::vector<int64_t>{2, 3, 0, 1});
  auto [vd, id] = sort(x, 0, /*descending=*/true);
  expect_values(vd, {4}, {kNaN, 3, 2, 1});
  CHECK(ints(id) == std::vector<int64_t>{1, 0, 3, 2});
  auto [vz, iz] = sort(from_vector<float>({0.f, -0.f, 0.f, -0.f}, {4}), std::optional<bool>(true));
  CHECK(ints(iz) == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(std::signbit(vz.to_vector<float>()[1]));  // the values are the input's, -0 included
}

TEST_CASE("sort: equal values keep their order, ascending and descending (PyTorch's stable sort)") {
  Tensor x = from_vector<float>({1, 2, 1, 2, 1}, {5});
  auto [v, i] = sort(x, 0, true);
  expect_values(v, {5}, {2, 2, 1, 1, 1});
  CHECK(ints(i) == std::vector<int64_t>{1, 3, 0, 2, 4});
  CHECK(ints(argsort(from_vector<bool>({true, false, true, false}, {4}))) == std::vector<int64_t>{1, 3, 0, 2});
}

TEST_CASE("sort: long lines (radix path) against std::stable_sort, every key width, along a strided dim") {
  std::mt19937 rng(7);
  const int64_t n = 50000;
  SUBCASE("int32 with many duplicates, both orders") {
    std::vector<int32_t> data(n);
    std::vector<double> line(n);
    for (int64_t j = 0; j < n; ++j) line[size_t(j)] = data[size_t(j)] = int32_t(rng() % 200) - 100;
    Tensor x = from_vector<int32_t>(data, {n});
    for (bool desc : {false, true}) {
      auto [v, i] = sort(x, 0, desc);
      expect_sorted(v, i, line, desc, n);
    }
  }
  SUBCASE("float64 with NaN, infinities and signed zeros (8-byte keys)") {
    std::vector<double> line(n);
    std::normal_distribution<double> normal;
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t r = rng() % 50;
      line[size_t(j)] = r == 0   ? kNaN
                        : r == 1 ? INFINITY
                        : r == 2 ? -INFINITY
                        : r == 3 ? -0.0
                        : r == 4 ? 0.0
                                 : normal(rng);
    }
    Tensor x = from_vector<double>(line, {n});
    for (bool desc : {false, true}) {
      auto [v, i] = sort(x, -1, desc);
      expect_sorted(v, i, line, desc, n);
    }
  }
  SUBCASE("int64 and float32 along dim 0 of [n, 3]: each column a line") {
    const int64_t rows = 4000;
    std::vector<int64_t> data(size_t(rows * 3));
    for (auto& d : data) d = int64_t(rng() % 1000) * (rng() % 2 ? 1 : -1) * 1000000007LL;
    Tensor x = from_vector<int64_t>(data, {rows, 3});
    auto [v, i] = sort(x, 0);
    Tensor xf = x.to(kFloat32);
    auto [vf, jf] = sort(xf, 0, true);
    for (int64_t c = 0; c < 3; ++c) {
      std::vector<double> line(static_cast<size_t>(rows)), linef(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        line[size_t(r)] = double(data[size_t(r * 3 + c)]);
        linef[size_t(r)] = double(float(data[size_t(r * 3 + c)]));
      }
      expect_sorted(v.select(1, c).contiguous(), i.select(1, c).contiguous(), line, false, rows);
      expect_sorted(vf.select(1, c).contiguous(), jf.select(1, c).contiguous(), linef, true, rows);
    }
  }
}

TEST_CASE("topk: the stable sort's first k, by the one-pass and the sorting path, NaN is largest") {
  std::mt19937 rng(11);
  const int64_t n = 3000;
  std::vector<float> data(n);
  std::vector<double> line(n);
  for (int64_t j = 0; j < n; ++j) {
    data[size_t(j)] = (rng() % 97 == 0) ? NAN : float(int(rng() % 500));  // ties and NaNs
    line[size_t(j)] = data[size_t(j)];
  }
  Tensor x = from_vector<float>(data, {n});
  for (int64_t k : {int64_t(1), int64_t(10), int64_t(64), int64_t(500), n}) {
    for (bool largest : {true, false}) {
      CAPTURE(k);
      CAPTURE(largest);
      auto [v, i] = topk(x, k, 0, largest);
      expect_sorted(v, i, line, largest, k);
    }
  }
  auto [v, i] = topk(from_vector<float>({1, NAN, 3}, {3}), 2);
  expect_values(v, {2}, {kNaN, 3});
  CHECK(ints(i) == std::vector<int64_t>{1, 2});
  auto [vs, is] = topk(from_vector<float>({1, NAN, 3}, {3}), 2, -1, /*largest=*/false);
  expect_values(vs, {2}, {1, 3});
  CHECK(ints(is) == std::vector<int64_t>{0, 2});
}

TEST_CASE("topk and kthvalue: k out of range is an IndexError naming k") {
  Tensor x = zeros({3});
  CHECK(has(error_text<IndexError>([&] { topk(x, 4); }), "k"));
  CHECK(has(error_text<IndexError>([&] { topk(x, -1); }), "selected index k out of range"));
  CHECK(has(error_text<IndexError>([&] { kthvalue(x, 0); }), "selected number k out of range"));
  CHECK(has(error_text<IndexError>([&] { kthvalue(x, 4); }), "k"));
  CHECK(has(error_text<IndexError>([&] { sort(x, 1); }), "dim"));
  CHECK(has(error_text<ValueError>([&] { sort(x, std::optional<bool>()); }), "stable"));
}

TEST_CASE("sorting ops on 0-d and empty tensors, as PyTorch") {
  Tensor s = scalar_tensor(5.0);
  auto [v, i] = sort(s);
  expect_values(v, {}, {5});
  expect_values(i, {}, {0});
  auto [tv, ti] = topk(s, 1);
  expect_values(tv, {}, {5});
  expect_values(ti, {}, {0});
  auto [kv, ki] = kthvalue(s, 1);
  expect_values(kv, {}, {5});
  expect_values(ki, {}, {0});
  auto [sv, si] = mode(s);
  expect_values(sv, {}, {5});
  expect_values(si, {}, {0});
  expect_values(msort(s), {}, {5});

  Tensor e = zeros({3, 0});
  auto [ev, ei] = sort(e, 1);
  expect_values(ev, {3, 0}, {});
  expect_values(ei, {3, 0}, {});
  auto [zv, zi] = topk(e, 0, 0);
  expect_values(zv, {0, 0}, {});
  expect_values(zi, {0, 0}, {});
  auto [kev, kei] = kthvalue(e, 1, 0);  // lines of 3, none of them
  expect_values(kev, {0}, {});
  expect_values(kei, {0}, {});
  CHECK(std::isnan(median(zeros({0})).item<float>()));
  CHECK(has(error_text<IndexError>([&] { median(e, 1); }), "Expected reduction dim 1 to have non-zero size"));
  CHECK(has(error_text<IndexError>([&] { mode(e, 1); }), "non-zero size"));
  auto [mev, mei] = median(e, 0);  // the empty dim is not the one reduced
  expect_values(mev, {0}, {});
  expect_values(mei, {0}, {});
}

TEST_CASE("median, nanmedian and mode: NaN as PyTorch, the lower middle of an even count") {
  expect_values(median(from_vector<float>({1, 2, 3, 4}, {4})), {}, {2});
  expect_values(median(from_vector<float>({3, NAN, 1, 2}, {4})), {}, {kNaN});
  expect_values(nanmedian(from_vector<float>({3, NAN, 1, 2}, {4})), {}, {2});
  expect_values(nanmedian(from_vector<float>({NAN, NAN}, {2})), {}, {kNaN});
  auto [v, i] = median(from_vector<float>({1, NAN, 3}, {1, 3}), 1);
  expect_values(v, {1}, {kNaN});
  expect_values(i, {1}, {1});
  auto [nv, ni] = nanmedian(from_vector<float>({1, NAN, 3, NAN}, {1, 4}), 1);
  expect_values(nv, {1}, {1});
  expect_values(ni, {1}, {0});
  // NaNs are never equal to each other: three of them lose to two 1s.
  auto [mv, mi] = mode(from_vector<float>({1, 1, 2, 2, NAN, NAN, NAN}, {7}));
  expect_values(mv, {}, {1});
  expect_values(mi, {}, {1});
  auto [iv, ii] = mode(from_vector<int64_t>({2, 1, -2, 1, 2, 0, 1, 0}, {8}));
  expect_values(iv, {}, {1});
  expect_values(ii, {}, {6});
}

TEST_CASE("topk: the gradient goes back to the k places picked") {
  Tensor x = from_vector<double>({3, 1, 4, 1, 5, 9, 2, 6}, {2, 4}).requires_grad_();
  auto [v, i] = topk(x, 2, 1);
  CHECK(ints(i) == std::vector<int64_t>{2, 0, 1, 3});
  sum(v * from_vector<double>({1, 2, 3, 4}, {2, 2})).backward();
  expect_values(x.grad(), {2, 4}, {2, 0, 1, 0, 0, 3, 0, 4});
  Tensor s = scalar_tensor(2.0, TensorOptions(kFloat64)).requires_grad_();  // 0-d: k = 1 is the identity
  sum(std::get<0>(topk(s, 1)) * 3).backward();
  expect_values(s.grad(), {}, {3});
}

TEST_CASE("topk of a 0-d view: every result element is written") {
  for (DType dt : {kInt64, kFloat64, kInt8, kInt16}) {
    Tensor base = from_vector(std::vector<double>{1.5, -2, 7}, {3}).to(dt);
    for (int64_t k : {0, 1}) {
      auto a = topk(base.select(0, 1), k, 0);
      auto b = topk(base.select(0, 1).contiguous(), k, 0);
      INFO("dtype " << std::string(dtype_name(dt)) << " k " << k);
      CHECK(same_values(std::get<0>(a), std::get<0>(b)));
      CHECK(same_values(std::get<1>(a), std::get<1>(b)));
      CHECK(std::get<0>(a).to_vector<double>() == std::vector<double>{-2});
    }
  }
}

TEST_CASE("topk: a view input gives what its contiguous copy gives, special values included") {
  const std::vector<double> specials{0, 1, -1, 2, NAN, INFINITY, -INFINITY, 1e300, -1e30, 65504, 0.5, -0.25};
  for (DType dt : {kInt64, kFloat64, kInt32, kFloat32, kUInt8, kInt16, kBFloat16}) {
    for (int64_t n : {1, 2, 3, 5}) {
      std::vector<double> v(size_t(4 * n * 3));
      for (size_t i = 0; i < v.size(); ++i) v[i] = specials[(i * 7 + size_t(n)) % specials.size()];
      Tensor base = from_vector(v, {4, n, 3}).to(dt);
      const Tensor expanded = base.unsqueeze(0).expand({3, 4, n, 3});  // stride 0
      for (const Tensor& view : {base.transpose(0, 2), base.narrow(0, 1, 3), base.select(2, 1), expanded}) {
        const Tensor dense = view.contiguous();
        for (int64_t dim = 0; dim < view.dim(); ++dim) {
          for (int64_t k = 0; k <= view.size(dim); ++k) {
            for (bool largest : {true, false}) {
              auto a = topk(view, k, dim, largest);
              auto b = topk(dense, k, dim, largest);
              INFO("dtype " << std::string(dtype_name(dt)) << " n " << n << " dim " << dim << " k " << k);
              CHECK(same_values(std::get<0>(a), std::get<0>(b)));
              CHECK(same_values(std::get<1>(a), std::get<1>(b)));
            }
          }
        }
      }
    }
  }
}
