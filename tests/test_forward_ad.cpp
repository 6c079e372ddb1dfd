// Forward-mode AD: dual tensors and levels, tangents through each way an op pushes them (derived
// pointwise formulas, jvp formulas, linear ops and views, transposed backward formulas), in-place
// ops and views, complex tangents, autograd::jvp / vjp, and reverse-over-forward.
// Expected values are PyTorch 1.13's (torch.autograd.forward_ad, python3-torch).
#include <doctest/doctest.h>
#include <vector>
#include "test_helpers.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/cumprod.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/sin.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/tanh.h"

using namespace kiln;
using namespace kiln::testing;
namespace fwad = kiln::autograd::forward_ad;

namespace {
using C = complex<double>;

Tensor f64(const std::vector<double>& v, std::vector<int64_t> sizes = {}) {
  if (sizes.empty()) sizes = {int64_t(v.size())};
  return from_vector<double>(v, sizes);
}

Tensor tangent_of(const Tensor& t) { return fwad::unpack_dual(t).tangent; }

void check_complex(const Tensor& t, const std::vector<C>& want) {
  REQUIRE(t.dtype() == DType::Complex128);
  std::vector<C> got = t.to_vector<C>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].re == doctest::Approx(want[i].re).epsilon(1e-12));
    CHECK(got[i].im == doctest::Approx(want[i].im).epsilon(1e-12));
  }
}

const Tensor kX = f64({0.5, -1.2, 2.0}), kT = f64({1.0, 2.0, -0.5});
const Tensor kA = f64({1, 2, 3, 4, 5, 6}, {2, 3}), kTA = f64({0.5, -1, 0, 2, 1, -3}, {2, 3});
const Tensor kB = f64({1, -1, 0.5, 2, 3, 1}, {3, 2}), kTB = f64({1, 0, 0, 1, -1, 2}, {3, 2});
}  // namespace

TEST_CASE("forward AD: levels and dual tensors") {
  CHECK(has(error_text<ValueError>([] { fwad::make_dual(kX, kT); }), "DualLevel must be live"));
  {
    fwad::DualLevel level;
    CHECK(has(error_text<NotImplementedError>([] { fwad::DualLevel nested; }), "nested forward-mode AD"));
    CHECK(has(error_text<ValueError>([] { fwad::make_dual(kX, f64({1, 2})); }), "different size"));
    CHECK(has(error_text<ValueError>([] { fwad::make_dual(kX, kT.to(DType::Float32)); }), "dtype float64"));
    CHECK(has(error_text<ValueError>([] { fwad::make_dual(kX.to(DType::Int64), kT.to(DType::Int64)); }),
              "floating point or complex"));
    Tensor x = fwad::make_dual(kX, kT);
    CHECK(x.storage() == kX.storage());  // a view of the primal
    fwad::UnpackedDual u = fwad::unpack_dual(x);
    expect_close(u.primal, {0.5, -1.2, 2.0});
    CHECK(u.tangent.is_same(kT));
    CHECK_FALSE(fwad::unpack_dual(u.primal).tangent.defined());
    CHECK_FALSE(tangent_of(kX).defined());  // make_dual leaves its argument alone
    Tensor y = sin(x);
    CHECK(tangent_of(y).defined());
    // an op that returns its input (same dtype, already contiguous) keeps the very same tangent
    CHECK(tangent_of(x.to(DType::Float64)).is_same(kT));
    CHECK(tangent_of(x.contiguous()).is_same(kT));
    // integer and boolean results carry no tangent
    CHECK_FALSE(tangent_of(argmax(x)).defined());
    CHECK_FALSE(tangent_of(x > 0).defined());
    // out= would drop the tangent
    Tensor out = empty_like(kX);
    CHECK(has(error_text<NotImplementedError>([&] { sin_out(out, x); }), "out= call with dual inputs"));
  }
  // a new level forgets the old one's tangents; so does having none
  fwad::DualLevel again;
  CHECK_FALSE(tangent_of(kX).defined());
}

TEST_CASE("forward AD: tangents of pointwise ops, jvp formulas, linear ops and transposed backward formulas") {
  fwad::DualLevel level;
  Tensor x = fwad::make_dual(kX, kT);
  // derived from the derivatives (pointwise)
  expect_close(tangent_of(sin(x) * exp(x)), {2.2373281197977843, -0.34316943935878197, -1.8219586883944454});
  // jvp formulas
  expect_close(tangent_of(softmax(x, 0)), {0.2038281519829171, 0.06948737056262969, -0.27331552254554675});
  expect_close(tangent_of(log_softmax(x, 0)), {1.1545585980573583, 2.154558598057358, -0.3454414019426417});
  Tensor a = fwad::make_dual(kA, kTA), b = fwad::make_dual(kB, kTB);
  expect_close(tangent_of(tanh(mm(a, b) * 0.1)),
               {-0.07184026323205499, 0.3913677694229726, -0.0249454819668484, 0.4270279946903725});
  // linear: views, sums, cat (an input without a tangent counts as zeros)
  expect_close(tangent_of(sum(a.t(), {0})), {-0.5, 0.0});
  expect_close(tangent_of(cat({a, kA * 2}, 0)), {0.5, -1, 0, 2, 1, -3, 0, 0, 0, 0, 0, 0});
  // the backward formula transposed (no jvp formula): prod, cumprod, max.dim
  expect_close(tangent_of(prod(x)), {-0.09999999999999992});
  expect_close(tangent_of(cumprod(x, 0)), {1.0, -0.19999999999999996, -0.09999999999999991});
  auto [values, indices] = max(a, 1);
  expect_close(tangent_of(values), {0.0, -3.0});
  CHECK_FALSE(tangent_of(indices).defined());
}

TEST_CASE("forward AD: in-place ops update tangents, through views too") {
  fwad::DualLevel level;
  SUBCASE("in place on a view of a dual tensor writes the base's tangent") {
    Tensor base = fwad::make_dual(kA.clone(), kTA.clone());
    base.select(0, 0).mul_(2);
    expect_close(tangent_of(base), {1, -2, 0, 2, 1, -3});
    expect_close(base, {2, 4, 6, 4, 5, 6});
  }
  SUBCASE("a plain tensor written with a dual one gets a tangent, zero elsewhere") {
    Tensor base = kA.clone();
    Tensor o = fwad::make_dual(f64({1, 2, 3}), f64({1, 1, 1}));
    base.select(0, 1).mul_(o);
    expect_close(tangent_of(base), {0, 0, 0, 4, 5, 6});
    Tensor target = zeros({2, 3}, DType::Float64);
    target.select(0, 0).copy_(o);  // PyTorch's target[0] = o
    expect_close(tangent_of(target), {1, 1, 1, 0, 0, 0});
    target.fill_(1);
    expect_close(tangent_of(target), {0, 0, 0, 0, 0, 0});
  }
  SUBCASE("an in-place op reads self's old value for its tangent") {
    Tensor x = fwad::make_dual(kX.clone(), kT.clone());
    x.mul_(x.detach() + 1);  // d(x * (x0 + 1)) = t * (x0 + 1)
    expect_close(tangent_of(x), {1.5, -0.3999999999999999, -1.5});
  }
}

TEST_CASE("forward AD: complex tangents follow the directional derivative") {
  fwad::DualLevel level;
  Tensor z = fwad::make_dual(from_vector<C>({C(1, 2), C(-0.5, 0.25)}, {2}), from_vector<C>({C(0.5, -1), C(2, 0)}, {2}));
  check_complex(tangent_of(z * conj(z) + exp(z)),
                {C(-1.0938755198735879, 2.367067719759223), C(-0.8246498193121548, 0.30011617324432655)});
  expect_close(tangent_of(abs(z)), {-0.6708203932499368, -1.7888543819998315});
}

TEST_CASE("autograd::jvp and autograd::vjp match torch.autograd.functional") {
  auto f = [](const TensorList& in) { return TensorList{in[0] * sin(in[1]), sum(in[0] * in[0])}; };
  const TensorList primals = {f64({1, 2}), f64({0.3, -0.7})};
  auto [values, jvps] = autograd::jvp(f, primals, {f64({1, 0}), f64({0.5, 1})});
  expect_close(values[0], {0.29552020666133955, -1.288435374475382});
  expect_close(values[1], {5.0});
  expect_close(jvps[0], {0.7731884512241425, 1.529684374568977});
  expect_close(jvps[1], {2.0});
  CHECK_FALSE(values[0].requires_grad());
  auto [outs, grads] = autograd::vjp(f, primals, {f64({1, -1}), f64({2.0}).reshape({})});
  expect_close(outs[1], {5.0});
  expect_close(grads[0], {4.295520206661339, 8.644217687237692});
  expect_close(grads[1], {0.955336489125606, -1.529684374568977});
  CHECK(has(error_text<ValueError>([&] { autograd::jvp(f, primals, {f64({1, 0})}); }), "expected 2 tangents"));
}

TEST_CASE("forward AD: reverse mode through tangents gives Hessian-vector products") {
  Tensor x = f64({0.5, -1.0, 2.0});
  x.requires_grad_(true);
  fwad::DualLevel level;
  Tensor xd = fwad::make_dual(x, kT);
  Tensor y = sum(xd * xd * xd);
  Tensor ty = tangent_of(y);
  REQUIRE(ty.requires_grad());
  expect_close(autograd::grad({ty}, {x})[0], {3.0, -12.0, -6.0});  // 6 x t
}
