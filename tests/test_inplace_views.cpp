// In-place ops on views under autograd, against PyTorch 1.13's gradients (python3-torch): the
// base's history is rebased (CopySlices) and views of it remake theirs from the base.
#include <doctest/doctest.h>
#include <string>
#include <vector>
#include "test_helpers.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/clone.h"
#include "kiln/gen/api/diagonal.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/select.h"
#include "kiln/gen/api/sin.h"
#include "kiln/gen/api/split.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using D = std::vector<double>;

Tensor f64(const D& v, std::vector<int64_t> shape) { return from_vector<double>(v, shape); }
// x = arange(12).reshape(3, 4) / 4 - 1, a leaf that requires grad
Tensor leaf_x() {
  return f64({-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75}, {3, 4}).requires_grad_(true);
}
Tensor weights() { return f64({1, -2, 3, 0.5, 2, 1, -1, 4, 0.5, 3, 2, -1}, {3, 4}); }


void check_raises(ErrorKind kind, const std::string& fragment, const std::function<void()>& f) {
  try {
    f();
    FAIL("no error; expected: " << fragment);
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos, e.what());
  }
}
}  // namespace

TEST_CASE("in-place on views: narrow, select, diagonal and a transposed view of a leaf's descendant") {
  {  // y = x * 2; y.narrow(1, 0, 1).mul_(3); (y * W).sum()
    Tensor x = leaf_x();
    Tensor y = x * 2;
    y.narrow(1, 0, 1).mul_(3);
    CHECK(std::string(y.grad_fn()->name()) == "CopySlices");
    sum(y * weights()).backward();
    expect_close(x.grad(), {6, -4, 6, 1, 12, 2, -2, 8, 3, 6, 4, -2});
  }
  {  // y = sin(x); y.select(0, 1).add_(z); (y * y).sum()
    Tensor x = leaf_x();
    Tensor z = f64({0.5, -1, 2, 1.5}, {4}).requires_grad_(true);
    Tensor y = sin(x);
    y.select(0, 1).add_(z);
    sum(y * y).backward();
    expect_close(x.grad(), {-0.9092974268256818, -0.9974949866040543, -0.8414709848078965, -0.479425538604203, 1.0,
                            -1.4583993048170865, 4.351801232369388, 3.1925615932255167, 0.9092974268256818,
                            0.5984721441039565, 0.1411200080598672, -0.35078322768961984});
    expect_close(z.grad(), {1.0, -1.505192081490954, 4.958851077208406, 4.363277520046668});
  }
  {  // y = x.clone(); y.diagonal().mul_(v)
    Tensor x = f64({0, 1. / 3, 2. / 3, 1, 4. / 3, 5. / 3, 2, 7. / 3, 8. / 3}, {3, 3}).requires_grad_(true);
    Tensor v = f64({1, -2, 0.5}, {3}).requires_grad_(true);
    Tensor y = clone(x);
    y.diagonal().mul_(v);
    sum(y * f64({1, -2, 3, 2, 1, -1, 0.5, 3, 2}, {3, 3})).backward();
    expect_close(x.grad(), {1, -2, 3, 2, -2, -1, 0.5, 3, 1});
    expect_close(v.grad(), {0, 4. / 3, 16. / 3});
  }
  {  // y = x * 1; y.t().narrow(0, 1, 2).mul_(w2)
    Tensor x = leaf_x();
    Tensor w2 = f64({1.5, 1.5, 1.5, -0.5, -0.5, -0.5}, {2, 3}).requires_grad_(true);
    Tensor y = x * 1;
    y.t().narrow(0, 1, 2).mul_(w2);
    sum(y * weights()).backward();
    expect_close(x.grad(), {1, -3, -1.5, 0.5, 2, 1.5, 0.5, 4, 0.5, 4.5, -1, -1});
    expect_close(w2.grad(), {1.5, 0.25, 3.75, -1.5, -0.5, 3});
  }
}

TEST_CASE("in-place on views: chained views, and views made before the write see it") {
  {  // v3 = y.select(0, 2) first; then y.narrow(0, 1, 2).select(1, 2).mul_(5)
    Tensor x = leaf_x();
    Tensor y = x * 1;
    Tensor v3 = y.select(0, 2);
    Tensor v2 = y.narrow(0, 1, 2).select(1, 2);
    v2.mul_(5);
    (sum(y * weights()) + sum(v3) * 2).backward();
    expect_close(x.grad(), {1, -2, 3, 0.5, 2, 1, -5, 4, 2.5, 5, 20, 1});
  }
  {  // a = y[0]; y.narrow(0, 0, 2).mul_(3); a.sum() sees the tripled values
    Tensor x = leaf_x();
    Tensor y = x * 1;
    Tensor a = y.select(0, 0);
    y.narrow(0, 0, 2).mul_(3);
    sum(a * f64({1, 2, 3, 4}, {4})).backward();
    expect_close(x.grad(), {3, 6, 9, 12, 0, 0, 0, 0, 0, 0, 0, 0});
  }
  {  // masked_fill_ on a slice
    Tensor x = leaf_x();
    Tensor y = x * 1;
    Tensor mask = from_vector<bool>({true, false, false, true, false, true, false, false}, {2, 4});
    y.narrow(0, 0, 2).masked_fill_(mask, 0.0);
    sum(y * weights()).backward();
    expect_close(x.grad(), {0, -2, 3, 0, 2, 0, -1, 4, 0.5, 3, 2, -1});
  }
}

TEST_CASE("in-place on views: x[i] = v builds history into a tensor that had none") {
  Tensor v = f64({1, 2, 3, 4}, {4}).requires_grad_(true);
  Tensor x = zeros({3, 4}, kFloat64);
  x.select(0, 1).copy_(v);  // PyTorch's x[1] = v
  CHECK(x.requires_grad());
  CHECK(std::string(x.grad_fn()->name()) == "CopySlices");
  expect_close(x, {0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0});
  sum(x * weights()).backward();
  expect_close(v.grad(), {2, 1, -1, 4});
}

TEST_CASE("in-place on views: double backward goes through CopySlices") {
  // y = x * x; y.narrow(0, 0, 2).mul_(x.narrow(0, 1, 2)): torch gives g = [4, 13, 10], gg = [6, 12, 6]
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_(true);
  Tensor y = x * x;
  y.narrow(0, 0, 2).mul_(x.narrow(0, 1, 2));
  Tensor g = autograd::grad({sum(y)}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  expect_close(g, {4, 13, 10});
  expect_close(autograd::grad({sum(g)}, {x})[0], {6, 12, 6});
}

TEST_CASE("in-place on views: PyTorch's errors") {
  // the base changed after a view's value was saved for backward
  {
    Tensor x = leaf_x();
    Tensor y = x * 1;
    Tensor s = sin(y.narrow(0, 0, 1));
    y.mul_(2);
    check_raises(ErrorKind::Autograd, "modified by an inplace operation", [&] { sum(s).backward(); });
  }
  // a view of a leaf that requires grad
  {
    Tensor x = leaf_x();
    const std::vector<double> before = x.to_vector<double>();
    check_raises(ErrorKind::Autograd,
                 "a view of a leaf Variable that requires grad is being used in an in-place operation",
                 [&] { x.narrow(0, 0, 1).mul_(2); });
    CHECK(x.to_vector<double>() == before);
  }
  // several elements of an expanded view share memory
  {
    Tensor x = leaf_x();
    Tensor y = x.narrow(0, 0, 1) * 1;
    check_raises(ErrorKind::Value, "more than one element of the written-to tensor refers to a single memory location",
                 [&] {
                   y.expand({3, 4}).mul_(2);
                 });
  }
  // the outputs of a function returning several views
  {
    Tensor x = leaf_x();
    Tensor y = x * 1;
    TensorList parts = split(y, 2);
    check_raises(ErrorKind::Autograd, "is the output of a function that returns multiple views",
                 [&] { parts[0].mul_(2); });
  }
}

TEST_CASE("a node saves only what a live edge's formula reads (PyTorch's should_compute_output)") {
  // s = y * 2 needs 2 for y's gradient, never y: changing y in place afterwards is no error
  Tensor x = leaf_x();
  Tensor y = x * 1;
  Tensor s = y * 2;
  y.mul_(3);
  sum(s).backward();
  expect_close(x.grad(), D(12, 2.0));
}

TEST_CASE("in-place on views: without autograd nothing is recorded and the base sees the write") {
  Tensor x = f64({1, 2, 3, 4}, {2, 2});
  x.select(0, 1).mul_(10);
  CHECK_FALSE(x.requires_grad());
  expect_close(x, {1, 2, 30, 40});
}
