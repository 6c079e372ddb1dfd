// kiln::call binds arguments like Python does and picks the overload that fits.
#include <doctest/doctest.h>
#include <algorithm>
#include <kiln/kiln.h>

using namespace kiln;

TEST_CASE("call: positional tensors and a keyword scalar") {
  Tensor a = tensor<float>({1, 2, 3}), b = tensor<float>({10, 20, 30});
  Value r = call("add", {a, b}, {{"alpha", 2}});
  CHECK(r.to_tensor().to_vector<float>() == std::vector<float>{21, 42, 63});
  // the overload name may be given explicitly
  CHECK(call("add.Tensor", {a, b}).to_tensor().to_vector<float>() == std::vector<float>{11, 22, 33});
}

TEST_CASE("call: overloads are chosen by argument kinds") {
  Tensor t = tensor<double>({2, 3});
  CHECK(call("pow", {t, 2}).to_tensor().to_vector<double>() == std::vector<double>{4, 9});
  CHECK(call("pow", {t, t}).to_tensor().to_vector<double>() == std::vector<double>{4, 27});
  Tensor m = from_vector<float>({1, 5, 3, 4}, {2, 2});
  CHECK(call("max", {m}).to_tensor().item<float>() == 5);
  const Value values_indices = call("max", {m, 1});  // max.dim -> (values, indices)
  const auto& tuple = values_indices.to_tuple();
  REQUIRE(tuple.size() == 2);
  CHECK(tuple[0].to_tensor().to_vector<float>() == std::vector<float>{5, 4});
  CHECK(tuple[1].to_tensor().to_vector<int64_t>() == std::vector<int64_t>{1, 1});
}

TEST_CASE("call: defaults, None and lists") {
  Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(call("sum", {t}).to_tensor().item<float>() == 21);
  CHECK(call("sum", {t}, {{"dim", std::vector<int64_t>{1}}, {"keepdim", true}}).to_tensor().sizes().vec() ==
        std::vector<int64_t>{2, 1});
  CHECK(call("sum", {t, Value()}).to_tensor().item<float>() == 21);  // dim=None
  CHECK(call("clamp", {t}, {{"max", 2}}).to_tensor().to_vector<float>() == std::vector<float>{1, 2, 2, 2, 2, 2});
  CHECK(call("cat", {TensorList{t, t}}, {{"dim", 1}}).to_tensor().sizes().vec() == std::vector<int64_t>{2, 6});
}

TEST_CASE("call: binding errors name the op and the problem") {
  Tensor t = tensor<float>({1, 2});
  CHECK_THROWS_WITH_AS(call("no_such_op", {t}), doctest::Contains("no op named 'no_such_op'"), ValueError);
  CHECK_THROWS_WITH_AS(call("add", {t, t}, {{"beta", 1}}), doctest::Contains("unexpected keyword argument 'beta'"),
                       ValueError);
  CHECK_THROWS_WITH_AS(call("add", {t}), doctest::Contains("missing required argument 'other'"), ValueError);
  CHECK_THROWS_WITH_AS(call("add", {t, t, 1}), doctest::Contains("positional argument"), ValueError);
  CHECK_THROWS_WITH_AS(call("add", {t, t}, {{"other", t}}), doctest::Contains("multiple values for argument 'other'"),
                       ValueError);
  CHECK_THROWS_WITH_AS(call("exp", {1.5}), doctest::Contains("argument 'self' expected Tensor, got"), ValueError);
}

TEST_CASE("ops() lists every op with its schema") {
  const auto& list = ops();
  CHECK(list.size() >= 140);
  auto it = std::find_if(list.begin(), list.end(), [](const OpSchema& s) { return s.name == "add.Tensor"; });
  REQUIRE(it != list.end());
  CHECK(it->signature == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  CHECK(!it->doc.empty());
}
