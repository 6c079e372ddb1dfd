// clip_grad_norm_ / clip_grad_value_ against torch.nn.utils (PyTorch 1.13, float32 gradients).
#include <doctest/doctest.h>
#include <limits>
#include <vector>
#include "kiln/clip_grad.h"
#include "kiln/core.h"

using namespace kiln;

namespace {

struct Params {
  Tensor a, b, c;  // c never gets a gradient
  Params() : a(zeros({2, 3})), b(zeros({4})), c(zeros({2})) {
    for (Tensor* t : {&a, &b, &c}) t->requires_grad_(true);
    a.set_grad(from_vector<float>({0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f}, {2, 3}));
    b.set_grad(from_vector<float>({3.0f, -4.0f, 0.5f, 1.0f}, {4}));
  }
};

void check_close(const Tensor& t, const std::vector<double>& want) {
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("clip_grad_norm_: the 2-norm over every gradient scales them to max_norm") {
  Params p;
  const Tensor total = nn::utils::clip_grad_norm_({p.a, p.b, p.c}, 2.0);
  CHECK(total.dim() == 0);
  CHECK(total.item<double>() == doctest::Approx(5.8630194664001465).epsilon(1e-7));
  check_close(p.a.grad(), {0.1705605536699295, -0.341121107339859, 0.682242214679718, 0.5116816759109497,
                           0.08528027683496475, -0.25584083795547485});
  check_close(p.b.grad(), {1.0233633518218994, -1.364484429359436, 0.1705605536699295, 0.341121107339859});
  CHECK_FALSE(p.c.grad().defined());
}

TEST_CASE("clip_grad_norm_: the infinity norm, and a norm under max_norm leaves the gradients") {
  Params p;
  const Tensor total = nn::utils::clip_grad_norm_({p.a, p.b}, 3.0, std::numeric_limits<double>::infinity());
  CHECK(total.item<double>() == 4.0);
  check_close(p.a.grad(), {0.37499991059303284, -0.7499998211860657, 1.4999996423721313, 1.124999761581421,
                           0.18749995529651642, -0.5624998807907104});
  Params q;
  CHECK(nn::utils::clip_grad_norm_({q.a, q.b}, 100.0, 1.0).item<double>() == 14.5);
  check_close(q.b.grad(), {3.0, -4.0, 0.5, 1.0});
  CHECK(nn::utils::clip_grad_norm_({q.c}, 1.0).item<double>() == 0.0);  // no gradient at all
}

TEST_CASE("clip_grad_norm_: a non-finite total raises with error_if_nonfinite, else scales") {
  Params p;
  p.b.set_grad(from_vector<float>({3.0f, std::numeric_limits<float>::infinity(), 0.5f, 1.0f}, {4}));
  const std::vector<double> a_before = p.a.grad().to_vector<double>();
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_({p.a, p.b}, 1.0, 2.0, /*error_if_nonfinite=*/true), ValueError);
  check_close(p.a.grad(), a_before);  // nothing was scaled
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_({p.a}, 1.0, -1.0), ValueError);
}

TEST_CASE("clip_grad_value_: clamps every element") {
  Params p;
  nn::utils::clip_grad_value_({p.a, p.b, p.c}, 1.0);
  check_close(p.a.grad(), {0.5, -1.0, 1.0, 1.0, 0.25, -0.75});
  check_close(p.b.grad(), {1.0, -1.0, 0.5, 1.0});
}
