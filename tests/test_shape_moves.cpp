// movedim, unflatten, the stacks, unbind and split_with_sizes beyond the generated value tests:
// views share storage, and bad arguments raise PyTorch's messages naming the op and argument.
#include <doctest/doctest.h>
#include "test_helpers.h"
#include "kiln/core.h"
#include "kiln/gen/api/atleast_1d.h"
#include "kiln/gen/api/atleast_3d.h"
#include "kiln/gen/api/column_stack.h"
#include "kiln/gen/api/hstack.h"
#include "kiln/gen/api/movedim.h"

using namespace kiln;
using namespace kiln::testing;

TEST_CASE("shape moves: results are views where PyTorch's are") {
  Tensor x = arange(24, kFloat32).reshape({2, 3, 4});
  Tensor m = movedim(x, {0, 1}, {2, 0});
  CHECK(m.sizes().vec() == std::vector<int64_t>{3, 4, 2});
  CHECK(m.storage() == x.storage());
  CHECK(x.movedim(0, -1).sizes().vec() == std::vector<int64_t>{3, 4, 2});
  CHECK(x.unflatten(2, {2, -1}).sizes().vec() == std::vector<int64_t>{2, 3, 2, 2});
  CHECK(x.swapaxes(0, 2).storage() == x.storage());
  TensorList rows = x.unbind(1);
  REQUIRE(rows.size() == 3);
  rows[1].fill_(-1);  // writes through to x
  CHECK(x.select(1, 1).eq(-1).all().item<bool>());
  TensorList parts = x.split_with_sizes({1, 3}, -1);
  CHECK(parts[1].sizes().vec() == std::vector<int64_t>{2, 3, 3});
  CHECK(parts[1].storage() == x.storage());
  Tensor s = scalar_tensor(5.0);
  CHECK(atleast_1d(x).is_same(x));  // already 1-d or more: self itself, as PyTorch
  CHECK(atleast_3d(s).sizes().vec() == std::vector<int64_t>{1, 1, 1});
  // a 0-d tensor: dims 0 and -1 name its one place (the fuzzer's case); the others have none
  CHECK(movedim(s, 0, -1).dim() == 0);
  CHECK(movedim(s, {-1}, {0}).item<double>() == 5.0);
  CHECK(has(error_text<IndexError>([&] { movedim(s, 1, 0); }), "movedim"));
  CHECK(has(error_text<IndexError>([&] { s.unbind(0); }), "no dimensions"));
  CHECK(has(error_text<IndexError>([&] { s.unflatten(0, {1}); }), "no dimensions"));
  CHECK(has(error_text<IndexError>([&] { s.split_with_sizes({1}, 0); }), "no dimensions"));
}

TEST_CASE("shape moves: bad arguments name the op and the argument") {
  Tensor x = zeros({2, 3, 4});
  CHECK(has(error_text<ValueError>([&] { movedim(x, {0, 0}, {1, 2}); }), "repeated dim in `source`"));
  CHECK(has(error_text<ValueError>([&] { movedim(x, {0, 1}, {2, 2}); }), "repeated dim in `destination`"));
  CHECK(has(error_text<ValueError>([&] { movedim(x, {0, 1}, {2}); }), "same number of dims"));
  CHECK(has(error_text<IndexError>([&] { movedim(x, 3, 0); }), "movedim"));
  CHECK(has(error_text<ValueError>([&] { x.unflatten(1, {2, 2}); }), "don't multiply up to the size of dim 1 (3)"));
  CHECK(has(error_text<ValueError>([&] { x.unflatten(1, {-1, -1}); }), "only one dimension can be inferred"));
  CHECK(has(error_text<ValueError>([&] { x.unflatten(1, {}); }), "sizes must be non-empty"));
  CHECK(has(error_text<ValueError>([&] { x.split_with_sizes({1, 1}, 1); }), "to sum exactly to 3"));
  CHECK(has(error_text<ValueError>([&] { x.split_with_sizes({4, -1}, 1); }), "non-negative entries"));
  CHECK(has(error_text<ValueError>([] { hstack({}); }), "non-empty TensorList"));
  CHECK(has(error_text<ValueError>([] { column_stack({}); }), "non-empty TensorList"));
}
