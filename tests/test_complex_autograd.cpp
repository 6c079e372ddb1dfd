// Complex autograd in PyTorch's convention (conjugate Wirtinger: backward(g) gives dL/dx + i dL/dy
// for L = Re(sum(conj(g) * output))), and the complex views real/imag/view_as_real/view_as_complex.
// Expected values are PyTorch 1.13's (python3-torch), printed to 12 digits.
#include <doctest/doctest.h>
#include <vector>
#include "test_helpers.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/angle.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/imag.h"
#include "kiln/gen/api/real.h"
#include "kiln/gen/api/sgn.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/view_as_complex.h"
#include "kiln/gen/api/view_as_real.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
using C = complex<double>;

Tensor c128(const std::vector<C>& values) { return from_vector<C>(values, {int64_t(values.size())}); }

void check_complex(const Tensor& t, const std::vector<C>& want, double eps = 1e-10) {
  REQUIRE(t.dtype() == DType::Complex128);
  std::vector<C> got = t.to_vector<C>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].re == doctest::Approx(want[i].re).epsilon(eps).scale(1));
    CHECK(got[i].im == doctest::Approx(want[i].im).epsilon(eps).scale(1));
  }
}
}  // namespace

TEST_CASE("complex autograd: the gradient of sum(z * c) is conj(c)") {
  Tensor z = c128({{1, 2}, {-0.5, 0.25}, {3, -1}}).requires_grad_(true);
  const Tensor c = c128({{2, -1}, {0.5, 3}, {-1, 0}});
  sum(z * c).backward(full({}, C(1, 0), DType::Complex128));
  check_complex(z.grad(), {{2, 1}, {0.5, -3}, {-1, 0}});
}

TEST_CASE("complex autograd: a real loss of complex numbers (abs, exp, conj, angle, sgn)") {
  Tensor z = c128({{1, 2}, {-0.5, 0.25}, {3, -1}}).requires_grad_(true);
  sum(abs(z)).backward();  // z / |z|
  check_complex(
      z.grad(),
      {{0.447213595500, 0.894427191000}, {-0.894427191000, 0.447213595500}, {0.948683298051, -0.316227766017}});

  z.set_grad(Tensor());
  Tensor w = from_vector<double>({0.5, -1.0, 2.0}, {3}).requires_grad_(true);
  // torch: (abs(exp(z) * w + conj(z)) ** 2).sum() + angle(z * 1j).sum() + view_as_real(sgn(z)).sum()
  Tensor loss = sum(square(abs(exp(z) * w + conj(z)))) + sum(angle(z * Scalar(C(0, 1)))) + sum(view_as_real(sgn(z)));
  CHECK(loss.item<double>() == doctest::Approx(1691.8718502767338).epsilon(1e-12));
  loss.backward();
  check_complex(
      z.grad(),
      {{-1.732448623858, 1.429512704404}, {-0.5035745354901, 1.490520890194}, {3339.687443535, 312.510865538414}});
  const std::vector<double> gw = w.grad().to_vector<double>();
  CHECK(gw[0] == doctest::Approx(-4.760259356602).epsilon(1e-10));
  CHECK(gw[1] == doctest::Approx(-1.398463015998).epsilon(1e-10));
  CHECK(gw[2] == doctest::Approx(1645.025952386).epsilon(1e-10));
}

TEST_CASE("complex views: real, imag and view_as_real share the complex tensor's storage") {
  Tensor z = c128({{1, 2}, {3, -4}});
  Tensor pairs = view_as_real(z);
  CHECK(pairs.sizes().vec() == std::vector<int64_t>{2, 2});
  CHECK(pairs.to_vector<double>() == std::vector<double>{1, 2, 3, -4});
  CHECK(real(z).to_vector<double>() == std::vector<double>{1, 3});
  CHECK(imag(z).to_vector<double>() == std::vector<double>{2, -4});
  imag(z).mul_(10);  // writes through the view, as PyTorch's z.imag *= 10
  check_complex(z, {{1, 20}, {3, -40}});
  // back: the same bytes as complex again, and a view of a narrowed tensor keeps its offset
  Tensor back = view_as_complex(pairs);
  CHECK(back.storage() == z.storage());
  check_complex(view_as_complex(view_as_real(z.narrow(0, 1, 1))), {{3, -40}});
  // a real tensor is its own real part
  Tensor x = from_vector<double>({1, 2}, {2});
  CHECK(real(x).is_same(x));
}

TEST_CASE("complex views: PyTorch's errors") {
  auto raises = [](ErrorKind kind, const char* op, auto&& f) {
    try {
      f();
      FAIL(op << ": no error");
    } catch (const Error& e) {
      CHECK(e.kind() == kind);
      CHECK(std::string(e.what()).find(op) != std::string::npos);
    }
  };
  raises(ErrorKind::DType, "imag", [] { imag(from_vector<double>({1}, {1})); });
  raises(ErrorKind::DType, "view_as_real", [] { view_as_real(from_vector<double>({1}, {1})); });
  raises(ErrorKind::Shape, "view_as_complex", [] { view_as_complex(from_vector<double>({1, 2, 3}, {3})); });
  raises(ErrorKind::Shape, "view_as_complex", [] {
    view_as_complex(from_vector<double>({1, 2, 3, 4}, {2, 2}).t());
  });  // last stride 2
  raises(ErrorKind::DType, "view_as_complex", [] { view_as_complex(from_vector<int64_t>({1, 2}, {2})); });
}
