// kiln::call binds arguments like Python does and picks the overload that fits.
#include <doctest/doctest.h>
#include <algorithm>
#include "kiln/core.h"

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

TEST_CASE("call: factories take dtype, layout, device and requires_grad keywords") {
  Tensor z = call("zeros", {std::vector<int64_t>{2, 3}}, {{"dtype", DType::Float64}}).to_tensor();
  CHECK(z.dtype() == DType::Float64);
  CHECK(z.sizes().vec() == std::vector<int64_t>{2, 3});
  CHECK(z.to_vector<double>() == std::vector<double>(6, 0.0));
  // by name, as Python spells them
  Tensor f = call("full", {std::vector<int64_t>{2}, 7}, {{"dtype", "int32"}, {"device", "cpu"}, {"layout", "strided"}})
                 .to_tensor();
  CHECK(f.dtype() == DType::Int32);
  CHECK(f.to_vector<int32_t>() == std::vector<int32_t>{7, 7});
  // without a dtype, full infers it from the value and arange from its bounds (torch's rules)
  CHECK(call("full", {std::vector<int64_t>{1}, true}).to_tensor().dtype() == DType::Bool);
  CHECK(call("arange", {5}).to_tensor().dtype() == DType::Int64);
  CHECK(call("arange", {0, 1, 0.25}).to_tensor().to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
  Tensor leaf = call("ones", {std::vector<int64_t>{2}}, {{"requires_grad", true}}).to_tensor();
  CHECK(leaf.requires_grad());
  CHECK(leaf.is_leaf());
  // *_like keeps self's dtype unless told otherwise
  Tensor like = call("zeros_like", {f}).to_tensor();
  CHECK(like.dtype() == DType::Int32);
  CHECK(call("ones_like", {f}, {{"dtype", DType::Float32}}).to_tensor().dtype() == DType::Float32);
  CHECK_THROWS_AS(call("zeros", {std::vector<int64_t>{2}}, {{"device", "gpu"}}), ValueError);
  CHECK_THROWS_AS(call("zeros", {std::vector<int64_t>{2}}, {{"layout", "banded"}}), ValueError);
}

TEST_CASE("call: random ops draw from the given generator, reproducibly") {
  Generator g(42);
  Tensor a = call("randn", {std::vector<int64_t>{4}}, {{"generator", g}, {"dtype", DType::Float64}}).to_tensor();
  g.manual_seed(42);
  Tensor b = call("randn", {std::vector<int64_t>{4}}, {{"generator", g}, {"dtype", DType::Float64}}).to_tensor();
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  CHECK(a.dtype() == DType::Float64);
  Tensor p = call("randperm", {6}).to_tensor();
  std::vector<int64_t> v = p.to_vector<int64_t>();
  std::sort(v.begin(), v.end());
  CHECK(v == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(p.dtype() == DType::Int64);
  Tensor t = zeros({3});
  call("uniform_", {t}, {{"from", 2.0}, {"to", 3.0}});  // writes into t
  for (float x : t.to_vector<float>()) CHECK((x >= 2 && x < 3));
  CHECK_THROWS_AS(call("rand", {std::vector<int64_t>{2}}, {{"dtype", DType::Int64}}), DTypeError);
}

TEST_CASE("dispatch: a sparse layout has no tables yet, and the error says so") {
  for (auto make : {+[] { return arange(5, TensorOptions(Layout::SparseCoo)); },
                    +[] { return zeros({2}, TensorOptions(Layout::SparseCsr)); },
                    +[] { return eye(2, TensorOptions(Layout::SparseCoo)); }}) {
    try {
      make();
      FAIL("a sparse layout was accepted");
    } catch (const NotImplementedError& e) {
      CHECK(e.arg() == "layout");
      CHECK(std::string(e.what()).find("sparse_c") != std::string::npos);
    }
  }
  CHECK(zeros({2}).layout() == Layout::Strided);
}
