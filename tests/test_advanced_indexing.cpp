// Advanced indexing, masks and libtorch's index lists beyond the generated value tests: the
// Python-style x.index({...}) / x.index_put_({...}, v) spelled as PyTorch's C++ API, index and
// mask errors raised before any write, gradients through reads and writes of views. Values
// marked "PyTorch:" come from torch 1.13.
#include <doctest/doctest.h>
#include "test_helpers.h"
#include "kiln/core.h"
#include "kiln/gen/api/index.h"
#include "kiln/gen/api/index_put.h"
#include "kiln/gen/api/index_put_.h"
#include "kiln/gen/api/masked_scatter.h"
#include "kiln/gen/api/masked_select.h"
#include "kiln/gen/api/nonzero.h"
#include "kiln/gen/api/nonzero_numpy.h"
#include "kiln/gen/api/where.h"
#include "kiln/indexing.h"

using namespace kiln;
using namespace kiln::testing;
using namespace kiln::indexing;

namespace {
Tensor i64(std::vector<int64_t> v) { return from_vector(v, {int64_t(v.size())}); }
Tensor mask(std::vector<uint8_t> v, std::vector<int64_t> shape) { return from_vector(v, shape).to(kBool); }
Tensor x234() { return arange(24, kFloat32).reshape({2, 3, 4}); }
}  // namespace

TEST_CASE("index lists: slices, integers, None, Ellipsis, bools and tensors as Python's x[...]") {
  const Tensor x = x234();
  // PyTorch: x[1::1, 0, None, ..., tensor([3, 0])] == [[[15, 12]]]
  expect_values(x.index({Slice(1, None, 1), 0, None, Ellipsis, i64({3, 0})}), {1, 1, 2}, {15, 12});
  // PyTorch: x[:, [[0, 2]], [1, 3]]: adjacent tensor indices keep their place
  expect_values(x.index({Slice(), from_vector<int64_t>({0, 2}, {1, 2}), i64({1, 3})}), {2, 1, 2}, {1, 11, 13, 23});
  // PyTorch: x[[1, 0], :, [3, -1]]: separated tensor indices go first
  expect_values(x.index({i64({1, 0}), Slice(), i64({3, -1})}), {2, 3}, {15, 19, 23, 3, 7, 11});
  // PyTorch: a 2-d mask covers two dims
  expect_values(x.index({mask({1, 0, 1, 0, 0, 1}, {2, 3})}), {3, 4}, {0, 1, 2, 3, 8, 9, 10, 11, 20, 21, 22, 23});
  expect_values(x.index({"...", 1}), {2, 3}, {1, 5, 9, 13, 17, 21});
  CHECK(x.index({true}).sizes().vec() == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(x.index({false}).sizes().vec() == std::vector<int64_t>{0, 2, 3, 4});
  CHECK(x.index({None, 0, Ellipsis, None}).sizes().vec() == std::vector<int64_t>{1, 3, 4, 1});
  // without tensor entries the result is a view: writing through it changes x
  Tensor y = x.clone();
  Tensor v = y.index({1, Slice(None, None, 2)});
  v.fill_(-1);
  CHECK(y.index({1, 2, 3}).item<float>() == -1.0f);
  CHECK(y.index({1, 1, 0}).item<float>() == 16.0f);
}

TEST_CASE("index_put_ with index lists: x[...] = v writes through views, casts v, accumulates") {
  Tensor y = zeros({3, 4});
  y.index_put_({i64({0, 2}), Slice(1, 3)}, from_vector<double>({1, 2}, {2}));  // float64 v is cast, as x[...] = v
  expect_values(y, {3, 4}, {0, 1, 2, 0, 0, 0, 0, 0, 0, 1, 2, 0});              // PyTorch
  Tensor z = zeros({2, 3, 4});
  z.index_put_({Slice(), i64({0, 2}), from_vector<int64_t>({1, 3}, {2, 1})}, 7);
  // PyTorch: z.nonzero() lists these places
  expect_values(nonzero(z).reshape({-1}), {24},
                {0, 0, 1, 0, 0, 3, 0, 2, 1, 0, 2, 3, 1, 0, 1, 1, 0, 3, 1, 2, 1, 1, 2, 3});
  Tensor w = zeros({3, 4});
  index_put_(w, {i64({0, 0, 2}), i64({1, 1, 3})}, from_vector<float>({1, 2, 5}, {3}), /*accumulate=*/true);
  expect_values(w, {3, 4}, {0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5});  // duplicates add
  Tensor m = arange(6, kFloat32).reshape({2, 3});
  m.index_put_({mask({1, 0, 1, 0, 1, 1}, {2, 3})}, 0.5);
  expect_values(m, {2, 3}, {0.5, 1, 0.5, 3, 0.5, 0.5});
  Tensor s = zeros({2, 2});
  s.index_put_({Ellipsis}, 3);
  expect_values(s, {2, 2}, {3, 3, 3, 3});
}

TEST_CASE("advanced indexing errors name the op and leave self as it was") {
  Tensor x = arange(6, kFloat32).reshape({2, 3});
  const Tensor before = x.clone();
  CHECK(has(error_text<IndexError>([&] { index(x, {i64({0, 5})}); }), "index 5 is out of bounds for dimension 0"));
  CHECK(has(error_text<IndexError>([&] { index(x, {Tensor(), i64({-4})}); }), "index -4 is out of bounds"));
  CHECK(has(error_text<IndexError>([&] { index(x, {mask({1, 0}, {1, 2})}); }), "The shape of the mask [1, 2]"));
  CHECK(has(error_text<IndexError>([&] { index(x, {i64({0}), i64({0}), i64({0})}); }), "too many indices"));
  CHECK(has(error_text<IndexError>([&] { index(x, {zeros({1}, kInt32)}); }), "must be long, byte or bool"));
  CHECK(has(error_text<IndexError>([&] { index(x, {i64({0, 1}), i64({0, 1, 2})}); }), "could not be broadcast"));
  CHECK(has(error_text<IndexError>([&] { x.index({0, 1, 2}); }), "too many indices"));
  CHECK(has(error_text<IndexError>([&] { x.index({Ellipsis, Ellipsis}); }), "single ellipsis"));
  CHECK(has(error_text<IndexError>([&] { x.index({"..x"}); }), "\"...\""));
  // writes: a bad index after good ones, a wrong dtype or shape of values: nothing written
  CHECK(has(error_text<IndexError>([&] { index_put_(x, {i64({0, 1, 2})}, zeros({3})); }), "index_put_"));
  CHECK(has(error_text<DTypeError>([&] { index_put_(x, {i64({0})}, zeros({3}, kFloat64)); }), "dtypes match"));
  CHECK(has(error_text<ShapeError>([&] { index_put_(x, {i64({0})}, zeros({2})); }), "cannot be broadcast"));
  CHECK(has(error_text<IndexError>([&] { x.index_put_({Slice(), i64({1, 3})}, 1.0); }), "out of bounds"));
  CHECK(same_values(x, before));
}

TEST_CASE("index_put (functional) leaves self alone, non-adjacent and non-contiguous targets") {
  const Tensor x = x234();
  const Tensor r = index_put(x, {i64({1, 0}), Tensor(), i64({3, 0})}, full({}, -1.0f));
  CHECK(same_values(x, x234()));
  CHECK(r.index({1, 2, 3}).item<float>() == -1.0f);
  CHECK(r.index({0, 1, 0}).item<float>() == -1.0f);
  CHECK(r.index({0, 1, 3}).item<float>() == 7.0f);
  // a transposed self: the indexed dims do not fold into a view, the write still lands in self
  Tensor t = zeros({4, 3}).t();  // [3, 4], strides [1, 3]
  t.index_put_({i64({2}), i64({1})}, 5);
  CHECK(t.index({2, 1}).item<float>() == 5.0f);
  Tensor u = zeros({4, 3});
  u.t().index_put_({i64({0, 2}), i64({3, 1})}, from_vector<float>({1, 2}, {2}));
  expect_values(u, {4, 3}, {0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0});
}

TEST_CASE("nonzero, argwhere, where(condition), masked_select and masked_scatter") {
  const float nan = std::nanf("");
  const Tensor a = from_vector<float>({0, 1.5f, 0, nan, 0, -0.0f}, {2, 3});
  expect_values(nonzero(a), {2, 2}, {0, 1, 1, 0});  // PyTorch: NaN counts, -0.0 does not
  expect_values(nonzero(full({}, 3.0f)), {1, 0}, {});
  expect_values(nonzero(full({}, 0.0f)), {0, 0}, {});
  const TensorList cols = nonzero_numpy(full({}, 2));  // PyTorch: (tensor([0]),)
  REQUIRE(cols.size() == 1);
  expect_values(cols[0], {1}, {0});
  const TensorList w = where(mask({0, 1, 1, 0}, {2, 2}));
  REQUIRE(w.size() == 2);
  expect_values(w[0], {2}, {0, 1});
  expect_values(w[1], {2}, {1, 0});
  expect_values(masked_select(arange(1, 7, 1, kInt64).reshape({2, 3}), mask({1, 0, 1}, {3})), {4}, {1, 3, 4, 6});
  expect_values(zeros({2, 3}).masked_scatter(mask({1, 0, 1}, {3}), arange(1, 7, 1, kFloat32)), {2, 3},
                {1, 0, 2, 3, 0, 4});  // PyTorch
  // uint8 masks are accepted (PyTorch's deprecated form), other dtypes refused
  expect_values(masked_select(arange(3, kFloat32), from_vector<uint8_t>({1, 0, 1}, {3})), {2}, {0, 2});
  CHECK(has(error_text<DTypeError>([&] { masked_select(zeros({3}), zeros({3}, kInt64)); }), "mask"));
  Tensor s = zeros({2, 3});
  CHECK(has(error_text<ShapeError>([&] { s.masked_scatter_(ones({2, 3}, kBool), zeros({5})); }), "at least 6"));
  CHECK(has(error_text<DTypeError>([&] { s.masked_scatter_(ones({3}, kBool), zeros({6}, kFloat64)); }), "source"));
  CHECK(same_values(s, zeros({2, 3})));
}

TEST_CASE("the mask kernels agree with a plain loop across block boundaries") {
  // 3 blocks of the CPU kernels' 65536 plus a partial one, so the prefix offsets are exercised
  const int64_t n = 3 * 65536 + 1234;
  const Tensor x = remainder(arange(n, kInt64) * 7919, 13).to(kFloat32);  // zero every 13th
  const Tensor m = ne(x, 0.0);
  const std::vector<float> xs = x.to_vector<float>();
  std::vector<double> want_pos, want_val;
  for (int64_t i = 0; i < n; ++i)
    if (xs[size_t(i)] != 0) {
      want_pos.push_back(double(i));
      want_val.push_back(xs[size_t(i)]);
    }
  expect_values(nonzero(x).reshape({-1}), {int64_t(want_pos.size())}, want_pos);
  expect_values(masked_select(x, m), {int64_t(want_val.size())}, want_val);
  const Tensor back = zeros({n}).masked_scatter(m, masked_select(x, m));
  CHECK(same_values(back, x));
}

TEST_CASE("gradients flow through index lists, index_put_ on views and masked ops") {
  Tensor a = arange(6, kFloat64).requires_grad_();
  // PyTorch: a.reshape(2, 3)[[1, 1, 0]].sum() -> grad [1, 1, 1, 2, 2, 2]
  a.reshape({2, 3}).index({i64({1, 1, 0})}).sum().backward();
  expect_close(a.grad(), {1, 1, 1, 2, 2, 2});
  Tensor b = arange(6, kFloat64).requires_grad_();
  Tensor z = b * 1;
  z.index_put_({i64({0, 5})}, from_vector<double>({9, 9}, {2}));  // the overwritten places get no gradient
  (z * arange(6, kFloat64)).sum().backward();
  expect_close(b.grad(), {0, 1, 2, 3, 4, 0});  // PyTorch
  Tensor c = arange(4, kFloat64).requires_grad_();
  Tensor v = full({}, 2.0, kFloat64).requires_grad_();
  Tensor d = c * 1;
  d.index_put_({Slice(1, 3)}, v);  // basic indexing: copy_ into a view
  d.sum().backward();
  expect_close(c.grad(), {1, 0, 0, 1});
  expect_close(v.grad(), {2});
  Tensor e = arange(6, kFloat64).reshape({2, 3}).requires_grad_();
  masked_select(e, mask({1, 0, 1}, {3})).sum().backward();
  expect_close(e.grad(), {1, 0, 1, 1, 0, 1});
}
