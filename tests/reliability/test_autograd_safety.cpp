// Autograd misuse gives a clear kiln::AutogradError, never a wrong gradient: in-place
// changes of saved tensors, a second backward through a freed graph, and gradients asked
// of outputs that have none (indices, comparisons, integer results).
#include <doctest/doctest.h>
#include <functional>
#include "kiln/core.h"
#include "test_helpers.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/gt.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/softmax.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::has;

namespace {
Tensor leaf(std::vector<double> v) {
  return from_vector<double>(v, {int64_t(v.size())}).requires_grad_();
}
}  // namespace

TEST_CASE("autograd safety: an in-place change of a saved input is caught at backward") {
  Tensor x = leaf({1, 2, 3});
  Tensor a = x * 2;          // non-leaf
  Tensor y = (a * a).sum();  // MulBackward saves a
  a.add_(1);
  std::string msg = error_text<AutogradError>([&] { y.backward(); });
  CHECK(has(msg, "modified by an inplace operation"));
  CHECK(has(msg, "expected version 0"));
  CHECK(!x.grad().defined());  // nothing reached the leaf
}

TEST_CASE("autograd safety: an in-place change of a saved output is caught at backward") {
  Tensor x = leaf({0.5, 1.0});
  Tensor e = x.exp();  // ExpBackward saves its result
  Tensor y = e.sum();
  e.mul_(3);
  std::string msg = error_text<AutogradError>([&] { y.backward(); });
  CHECK(has(msg, "modified by an inplace operation"));
}

TEST_CASE("autograd safety: an in-place change through a view of a saved tensor is caught") {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor a = x * 1;
  Tensor y = (a.sigmoid() * a).sum();  // saves a
  {
    NoGradGuard no_grad;
    a.narrow(0, 1, 2).fill_(0);  // same storage, so the version moves
  }
  CHECK(has(error_text<AutogradError>([&] { y.backward(); }), "modified by an inplace operation"));
}

TEST_CASE("autograd safety: backward twice without retain_graph is a clear error") {
  // One graph per kind of saving node; each must refuse the second pass.
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> graphs = {
      {"mul", [](const Tensor& x) { return (x * x).sum(); }},
      {"exp", [](const Tensor& x) { return x.exp().sum(); }},
      {"matmul", [](const Tensor& x) { return matmul(x.view({1, 3}), x.view({3, 1})).sum(); }},
      {"softmax", [](const Tensor& x) { return (softmax(x, 0) * x).sum(); }},
      {"cross_entropy", [](const Tensor& x) { return cross_entropy(x.view({1, 3}), tensor<int64_t>({2})); }},
  };
  for (auto& graph : graphs) {
    INFO(graph.first);
    auto& f = graph.second;
    Tensor x = leaf({0.1, 0.2, 0.3});
    Tensor y = f(x);
    y.backward();
    std::vector<double> first = x.grad().to_vector<double>();
    std::string msg = error_text<AutogradError>([&] { y.backward(); });
    CHECK(has(msg, "backward through the graph a second time"));
    CHECK(has(msg, "retain_graph=true"));
    CHECK(x.grad().to_vector<double>() == first);  // the failed pass added nothing
  }
}

TEST_CASE("autograd safety: retain_graph allows the second backward and gradients add up") {
  Tensor x = leaf({1, 2});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  kiln::testing::expect_values(x.grad(), {2}, {4, 8});
}

TEST_CASE("autograd safety: index and comparison outputs carry no gradient") {
  Tensor x = from_vector<double>({3, 1, 2, 5}, {2, 2}).requires_grad_();
  Tensor values, indices;
  std::tie(values, indices) = max(x, 1);
  CHECK(values.requires_grad());
  CHECK(!indices.requires_grad());
  CHECK(indices.dtype() == DType::Int64);
  CHECK(!argmax(x).requires_grad());
  Tensor cmp = gt(x, 2.0);
  CHECK(!cmp.requires_grad());
  CHECK(cmp.dtype() == DType::Bool);

  // backward from them is refused, naming the problem
  CHECK(has(error_text<AutogradError>([&] { indices.sum().backward(); }), "does not require grad"));
  CHECK(has(error_text<AutogradError>([&] { cmp.sum().backward(); }), "does not require grad"));
  // and so is asking for a gradient with respect to them
  CHECK(has(error_text<AutogradError>([&] { autograd::grad({values.sum()}, {indices}); }), "does not require grad"));
  // integer tensors cannot be made to require one
  Tensor idx = indices.clone();
  CHECK(has(error_text<AutogradError>([&] { idx.requires_grad_(); }), "floating point and complex"));
  // the differentiable output still works
  values.sum().backward();
  kiln::testing::expect_values(x.grad(), {2, 2}, {1, 0, 0, 1});
}

TEST_CASE("autograd safety: requires_grad cannot be switched off on a non-leaf") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  CHECK(has(error_text<AutogradError>([&] { y.requires_grad_(false); }), "leaf variables"));
}
