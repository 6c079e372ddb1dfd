// Reductions, softmax and log_softmax on the device against the CPU (runs only where a CUDA
// device is present): every CUDA reduction over dims, keepdim and dtypes, rows long enough to be
// split across blocks, PyTorch's tie/NaN/empty rules, the strided softmax path and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/amin.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/argmin.h"
#include "kiln/gen/api/count_nonzero.h"
#include "kiln/gen/api/gt.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/logsumexp.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/min.h"
#include "kiln/gen/api/norm.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/var.h"

using namespace kiln;
using kiln::testing::close;

namespace {

const Device kDev("cuda:0");
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

double rtol_of(DType d) { return d == kFloat64 ? 1e-12 : d == kFloat32 ? 1e-5 : d == kFloat16 ? 2e-3 : 1.6e-2; }

const DType kFloats[] = {kFloat32, kFloat64, kFloat16, kBFloat16};

}  // namespace

TEST_CASE("cuda reduce: sum, mean, amax, amin, prod, var and logsumexp over dims equal the CPU") {
  manual_seed(21);
  for (DType d : kFloats) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const double r = rtol_of(d), a = r;
    Tensor x = randn({6, 7, 130}).to(d), g = x.to(kDev);
    Tensor p = (rand({6, 7, 13}) * 0.5 + 0.75).to(d);  // products stay near 1
    for (bool keep : {false, true}) {
      CAPTURE(keep);
      CHECK(close(sum(g, {2}, keep).cpu(), sum(x, {2}, keep), r, a * 10));
      CHECK(close(sum(g, {0, 2}, keep).cpu(), sum(x, {0, 2}, keep), r, a * 30));
      CHECK(close(mean(g, {1}, keep).cpu(), mean(x, {1}, keep), r, a));
      CHECK(close(amax(g, {0, 1}, keep).cpu(), amax(x, {0, 1}, keep), 0, 0));
      CHECK(close(amin(g, {2}, keep).cpu(), amin(x, {2}, keep), 0, 0));
      CHECK(close(prod(p.to(kDev), 2, keep).cpu(), prod(p, 2, keep), r * 4, a));
      CHECK(close(var(g, std::vector<int64_t>{2}, std::nullopt, keep).cpu(), var(x, std::vector<int64_t>{2}, std::nullopt, keep), r * 4, a));
      CHECK(close(logsumexp(g, {0, 2}, keep).cpu(), logsumexp(x, {0, 2}, keep), r, a));
    }
    CHECK(close(g.sum().cpu(), x.sum(), r, a * 100));
    CHECK(close(g.mean().cpu(), x.mean(), r, a));
    CHECK(close(p.to(kDev).prod().cpu(), p.prod(), r * 10, a));
    CHECK(close(var(g, std::nullopt, Scalar(0), false).cpu(), var(x, std::nullopt, Scalar(0), false), r * 4, a));
    CHECK(close(g.max().cpu(), x.max(), 0, 0));
    CHECK(close(g.min().cpu(), x.min(), 0, 0));
    CHECK(close(g.transpose(0, 2).sum({1}).cpu(), x.transpose(0, 2).sum({1}), r, a * 10));  // strided input
  }
}

TEST_CASE("cuda reduce: integers sum and multiply into int64, dtype= casts first") {
  Tensor i = arange(3000, TensorOptions(kInt32)).reshape({30, 100}) - 1500;
  CHECK(close(sum(i.to(kDev), {1}).cpu(), sum(i, {1}), 0, 0));
  CHECK(sum(i.to(kDev)).dtype() == kInt64);
  CHECK(close(sum(i.to(kDev), {0}, false, kFloat64).cpu(), sum(i, {0}, false, kFloat64), 0, 0));
  Tensor small = (arange(24, TensorOptions(kInt64)).reshape({4, 6}) % 3) + 1;
  CHECK(close(prod(small.to(kDev), 1).cpu(), prod(small, 1), 0, 0));
  CHECK(close(amax(i.to(kDev), {1}).cpu(), amax(i, {1}), 0, 0));
  CHECK(close(argmin(i.to(kDev), 0).cpu(), argmin(i, 0), 0, 0));
}

TEST_CASE("cuda reduce: rows long enough to be split across blocks give the CPU's results") {
  manual_seed(22);
  const int64_t n = int64_t(1) << 21;
  Tensor x = randn({n}, TensorOptions(kFloat64));
  Tensor g = x.to(kDev);
  CHECK(close(g.sum().cpu(), x.sum(), 1e-10, 1e-9));
  CHECK(close(g.mean().cpu(), x.mean(), 1e-10, 1e-12));
  CHECK(close(g.max().cpu(), x.max(), 0, 0));
  CHECK(close(var(g, std::nullopt, std::nullopt, false).cpu(), var(x, std::nullopt, std::nullopt, false), 1e-10, 0));
  CHECK(close(logsumexp(g, {0}).cpu(), logsumexp(x, {0}), 1e-12, 0));
  std::vector<float> v(size_t(n), 0.0f);
  for (int64_t i : {n - 1, int64_t(700'000), int64_t(40'000), int64_t(1'500'000)}) v[size_t(i)] = 3.0f;
  Tensor t = from_vector<float>(v, {n});
  CHECK(argmax(t.to(kDev)).item().to_int() == 40'000);  // the first of ties in different chunks
  v[1'000'000] = std::numeric_limits<float>::quiet_NaN();
  v[1'900'000] = std::numeric_limits<float>::quiet_NaN();
  t = from_vector<float>(v, {n});
  CHECK(argmax(t.to(kDev)).item().to_int() == 1'000'000);  // the first NaN wins
  CHECK(argmin(t.to(kDev)).item().to_int() == 1'000'000);
  CHECK(std::isnan(t.to(kDev).sum().item().to_double()));
  Tensor few = randn({3, 400'000});  // a few long rows: split too
  CHECK(close(sum(few.to(kDev), {1}).cpu(), sum(few, {1}), 1e-4, 1e-2));
  CHECK(close(std::get<1>(max(few.to(kDev), 1)).cpu(), std::get<1>(max(few, 1)), 0, 0));
}

TEST_CASE("cuda reduce: max/min with indices and argmax/argmin follow the tie and NaN rules") {
  Tensor x = from_vector<double>({1, 5, 5, 2, kNaN, 0, kNaN, 9, 3, 3, 1, 3}, {3, 4});
  for (bool keep : {false, true}) {
    auto [v, i] = max(x.to(kDev), 1, keep);
    auto [cv, ci] = max(x, 1, keep);
    CHECK(close(v.cpu(), cv, 0, 0));
    CHECK(close(i.cpu(), ci, 0, 0));
    auto [mv, mi] = min(x.to(kDev), 0, keep);
    auto [cmv, cmi] = min(x, 0, keep);
    CHECK(close(mv.cpu(), cmv, 0, 0));
    CHECK(close(mi.cpu(), cmi, 0, 0));
    CHECK(close(argmax(x.to(kDev), 1, keep).cpu(), argmax(x, 1, keep), 0, 0));
    CHECK(close(argmin(x.to(kDev), std::nullopt, keep).cpu(), argmin(x, std::nullopt, keep), 0, 0));
  }
  CHECK(argmax(x.to(kDev)).item().to_int() == 4);
  Tensor h = from_vector<float>({2, 7, 7, -1}, {4}).to(kFloat16);
  CHECK(argmax(h.to(kDev)).item().to_int() == 1);
}

TEST_CASE("cuda reduce: all and any over bool, uint8, integers and floats, NaN counting as true") {
  Tensor b = from_vector<bool>({true, true, false, true, true, true}, {2, 3});
  CHECK(close(all(b.to(kDev), 1).cpu(), all(b, 1), 0, 0));
  CHECK(close(any(b.to(kDev), 0, true).cpu(), any(b, 0, true), 0, 0));
  CHECK(all(b.to(kDev)).item().to_int() == 0);
  CHECK(any(b.to(kDev)).item().to_int() == 1);
  Tensor u = from_vector<uint8_t>({0, 3, 0, 0}, {4});
  CHECK(any(u.to(kDev)).dtype() == kUInt8);
  CHECK(close(any(u.to(kDev)).cpu(), any(u), 0, 0));
  Tensor f = from_vector<double>({kNaN, 1, -2, 0}, {2, 2});
  CHECK(close(all(f.to(kDev), 1).cpu(), all(f, 1), 0, 0));
  CHECK(close(any(f.to(kDev), 0).cpu(), any(f, 0), 0, 0));
  Tensor e = empty({0}, TensorOptions(kFloat32, kDev));
  CHECK(all(e).item().to_int() == 1);
  CHECK(any(e).item().to_int() == 0);
  Tensor ones_long = ones({1 << 20}, TensorOptions(kInt32, kDev));
  CHECK(all(ones_long).item().to_int() == 1);
}

TEST_CASE("cuda reduce: empty inputs and infinities follow PyTorch") {
  Tensor e = empty({3, 0}, TensorOptions(kFloat32, kDev));
  CHECK(close(sum(e, {1}).cpu(), zeros({3}), 0, 0));
  CHECK(close(prod(e, 1).cpu(), ones({3}), 0, 0));
  CHECK(std::isnan(mean(e, {1}).cpu().to_vector<double>()[0]));
  CHECK(close(logsumexp(e, {1}).cpu(), full({3}, -kInf, TensorOptions(kFloat32)), 0, 0));
  CHECK(sum(e, {0}).sizes().equals({0}));
  CHECK(testing::has(testing::error_text<IndexError>([&] { (void)amax(e, {1}); }), "non-zero size"));
  CHECK(testing::has(testing::error_text<IndexError>([&] { (void)argmax(e); }), "numel() == 0"));
  Tensor inf = from_vector<double>({-kInf, -kInf, kInf, 1, 1, 2}, {3, 2});
  CHECK(close(logsumexp(inf.to(kDev), {1}).cpu(), logsumexp(inf, {1}), 1e-12, 0));
  Tensor one = from_vector<double>({4}, {1});
  CHECK(close(var(one.to(kDev), std::nullopt, std::nullopt, false).cpu(), var(one, std::nullopt, std::nullopt, false), 0, 0));
}

TEST_CASE("cuda reduce: bool and 8/16-bit integers sum into int64 and keep their dtype for max/min") {
  auto same = [](const Tensor& got, const Tensor& want) { return close(got.cpu(), want, 0, 0); };
  std::vector<uint8_t> u(3000);
  std::vector<int8_t> small(3000);
  for (size_t i = 0; i < u.size(); ++i) {
    u[i] = uint8_t((i * 37 + 11) % 256);
    small[i] = int8_t(int(i % 4) - 1);  // -1..2: products of 10 fit in int64
  }
  Tensor tu = from_vector<uint8_t>(u, {30, 100});
  CHECK(same(sum(tu.to(kDev)), sum(tu)));  // beyond 8 and 16 bits: int64
  CHECK(same(sum(tu.to(kDev), {0}), sum(tu, {0})));
  CHECK(same(amax(tu.to(kDev), {1}), amax(tu, {1})));
  CHECK(same(std::get<1>(min(tu.to(kDev), 1)), std::get<1>(min(tu, 1))));
  Tensor mask = gt(tu, 128);
  CHECK(same(sum(mask.to(kDev), {1}), sum(mask, {1})));
  CHECK(same(max(mask.to(kDev)), max(mask)));
  Tensor s = from_vector<int8_t>(small, {300, 10}), h = tu.to(kInt16) - 100;
  CHECK(same(prod(s.to(kDev), 1, false), prod(s, 1, false)));
  CHECK(same(argmin(h.to(kDev), 1), argmin(h, 1)));
  CHECK(same(count_nonzero(s.to(kDev), std::nullopt), count_nonzero(s, std::nullopt)));
}

TEST_CASE("cuda reduce: complex sum, mean, prod and truth reductions equal the CPU") {
  Tensor z = randn({40, 300}, TensorOptions(kComplex128)), zf = z.to(kComplex64);
  CHECK(testing::max_abs_error(sum(z.to(kDev)), sum(z)) < 1e-10);
  CHECK(testing::max_abs_error(sum(z.to(kDev), {0}), sum(z, {0})) < 1e-12);
  CHECK(testing::max_abs_error(mean(zf.to(kDev), {1}), mean(zf, {1})) < 1e-5);
  Tensor near_one = z * 0.01 + 1;
  CHECK(testing::max_abs_error(prod(near_one.to(kDev), 1, false), prod(near_one, 1, false)) < 1e-10);
  CHECK(sum(zf.to(kDev)).dtype() == kComplex64);
  Tensor holes = z * gt(z.abs(), 0.5);  // complex zeros where |z| <= 0.5
  CHECK(close(count_nonzero(holes.to(kDev), {1}).cpu(), count_nonzero(holes, {1}), 0, 0));
  CHECK(close(all(holes.to(kDev), 1, false).cpu(), all(holes, 1, false), 0, 0));
  CHECK(close(any(holes.to(kDev), 0, false).cpu(), any(holes, 0, false), 0, 0));
  // Real results: var and norm of complex tensors.
  Tensor v = var(z.to(kDev), {1}, std::nullopt, false);
  CHECK(v.dtype() == kFloat64);
  CHECK(close(v.cpu(), var(z, {1}, std::nullopt, false), 1e-10, 1e-12));
  for (double p : {2.0, 1.0, 3.0, kInf}) {
    Tensor n = norm(zf.to(kDev), p, {0}, false);
    CHECK(n.dtype() == kFloat32);
    CHECK(close(n.cpu(), norm(zf, p, {0}, false), 1e-5, 1e-5));
  }
}

TEST_CASE("cuda reduce: unsupported dtypes name the op and what it supports") {
  Tensor c = ones({3}, TensorOptions(kInt32, kDev));
  std::string msg = testing::error_text<DTypeError>([&] { (void)logsumexp(c, {0}); });
  CHECK(testing::has(msg, "logsumexp"));
  CHECK(testing::has(msg, "int32"));
  msg = testing::error_text<DTypeError>([&] { (void)var(ones({3}, TensorOptions(kInt64, kDev)), std::nullopt, std::nullopt, false); });
  CHECK(testing::has(msg, "var"));
}

TEST_CASE("cuda softmax: rows, strided columns and moved dims equal the CPU for every float dtype") {
  manual_seed(23);
  // [8, 50, 600] over dim 1: 4800 columns, one thread each; [2, 40, 100] over dim 1: 200 columns,
  // moved last; over dim 2: rows.
  for (DType d : kFloats) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const double r = d == kFloat64 ? 1e-12 : d == kFloat32 ? 1e-5 : d == kFloat16 ? 2e-3 : 1.6e-2;
    for (auto shape : {std::vector<int64_t>{8, 50, 600}, std::vector<int64_t>{2, 40, 100}}) {
      Tensor x = (randn(shape) * 3).to(d);
      for (int64_t dim : {0, 1, 2, -1}) {
        CAPTURE(dim);
        CHECK(close(softmax(x.to(kDev), dim).cpu(), softmax(x, dim), r, r * 1e-2));
        CHECK(close(log_softmax(x.to(kDev), dim).cpu(), log_softmax(x, dim), r, r));
      }
    }
  }
  Tensor h = randn({16, 300}).to(kFloat16);  // dtype= computes and returns float32
  CHECK(close(softmax(h.to(kDev), 1, kFloat32).cpu(), softmax(h, 1, kFloat32), 1e-5, 1e-7));
  Tensor big = from_vector<float>({1000, 1000, -1000}, {3});  // max-subtracted: no overflow
  CHECK(close(softmax(big.to(kDev), 0).cpu(), from_vector<float>({0.5, 0.5, 0}, {3}), 1e-6, 1e-7));
  CHECK(close(log_softmax(big.to(kDev), 0).cpu(), log_softmax(big, 0), 1e-6, 1e-4));
  Tensor scalar = full({}, 2.5, TensorOptions(kFloat32));
  CHECK(close(softmax(scalar.to(kDev), 0).cpu(), softmax(scalar, 0), 0, 0));
  CHECK(softmax(empty({0, 4}, TensorOptions(kFloat32, kDev)), 1).sizes().equals({0, 4}));
  Tensor wide = randn({1, 100'000});  // one long row
  CHECK(close(log_softmax(wide.to(kDev), 1).cpu(), log_softmax(wide, 1), 1e-5, 1e-5));
}

TEST_CASE("cuda norm: p = 2, 1, 0, 3, inf and -inf over dims and whole tensors equal the CPU") {
  manual_seed(24);
  for (DType d : kFloats) {
    const std::string dtype = dtype_name(d);
    CAPTURE(dtype);
    const double r = rtol_of(d) * 4;
    Tensor x = (randn({5, 6, 70}) * 2).to(d);
    x.select(2, 3).fill_(0);  // zeros for p = 0
    Tensor g = x.to(kDev);
    for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, kInf, -kInf}) {
      CAPTURE(p);
      CHECK(close(norm(g, Scalar(p), std::vector<int64_t>{2}, false).cpu(), norm(x, Scalar(p), std::vector<int64_t>{2}, false), r, r));
      CHECK(close(norm(g, Scalar(p), std::vector<int64_t>{0, 1}, true).cpu(), norm(x, Scalar(p), std::vector<int64_t>{0, 1}, true), r, r));
      CHECK(close(norm(g, Scalar(p), std::nullopt, false).cpu(), norm(x, Scalar(p), std::nullopt, false), r, r));
    }
  }
  Tensor e = empty({3, 0}, TensorOptions(kFloat32, kDev));  // empty reductions give 0 for every p
  CHECK(close(norm(e, Scalar(kInf), std::vector<int64_t>{1}, false).cpu(), zeros({3}), 0, 0));
  CHECK(close(norm(e, Scalar(2), std::vector<int64_t>{1}, false).cpu(), zeros({3}), 0, 0));
  Tensor n = from_vector<double>({1, kNaN, -3}, {3});
  CHECK(std::isnan(norm(n.to(kDev), Scalar(kInf), std::nullopt, false).item().to_double()));
  std::string msg = testing::error_text<DTypeError>([&] { (void)norm(ones({3}, TensorOptions(kInt64, kDev)), std::nullopt, std::nullopt, false); });
  CHECK(testing::has(msg, "norm"));
}

TEST_CASE("cuda count_nonzero: bool, uint8, integers and floats (NaN counts) over dims") {
  Tensor f = from_vector<double>({0, 1, kNaN, 0, -2, 0}, {2, 3});
  CHECK(close(count_nonzero(f.to(kDev), std::nullopt).cpu(), count_nonzero(f, std::nullopt), 0, 0));
  CHECK(close(count_nonzero(f.to(kDev), std::vector<int64_t>{1}).cpu(), count_nonzero(f, std::vector<int64_t>{1}), 0, 0));
  CHECK(count_nonzero(f.to(kDev), std::nullopt).item().to_int() == 3);
  Tensor i = arange(4000, TensorOptions(kInt32)).reshape({40, 100}) % 7;
  CHECK(close(count_nonzero(i.to(kDev), std::vector<int64_t>{0}).cpu(), count_nonzero(i, std::vector<int64_t>{0}), 0, 0));
  Tensor b = from_vector<bool>({true, false, true, true}, {4});
  CHECK(count_nonzero(b.to(kDev), std::nullopt).item().to_int() == 3);
  CHECK(count_nonzero(b.to(kDev), std::nullopt).dtype() == kInt64);
}
