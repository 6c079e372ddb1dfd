// The per-op test driver's own pieces: reference tensors and tolerances, deterministic sample
// inputs, argument binding, and a gradcheck that catches a wrong gradient.
#include <doctest/doctest.h>
#include <cmath>
#include <limits>
#include "kiln/core.h"
#include "support/gradcheck.h"
#include "support/op_catalog.h"
#include "support/sample_inputs.h"
#include "support/tensor_json.h"

using namespace kiln;
using namespace kiln::testing;
using nlohmann::json;

TEST_CASE("op driver: reference tensors round-trip, non-finite values and complex included") {
  json t = json::parse(R"({"dtype": "float32", "shape": [2, 2], "data": [1.5, "nan", "inf", "-inf"]})");
  Tensor x = tensor_from_json(t, kCPU);
  CHECK(x.dtype() == kFloat32);
  CHECK(x.sizes().equals({2, 2}));
  std::vector<double> v = x.to_vector<double>();
  CHECK(v[0] == 1.5);
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == std::numeric_limits<double>::infinity());
  CHECK(compare_with_json(x, t) == "");

  json c = json::parse(R"({"dtype": "complex64", "shape": [2], "data": [[1, -2], [0.5, 3]]})");
  Tensor z = tensor_from_json(c, kCPU);
  CHECK(z.to_vector<complex<double>>()[0] == complex<double>(1, -2));
  CHECK(compare_with_json(z, c) == "");
  json h = json::parse(R"({"dtype": "float16", "shape": [3], "data": [0.1, 65504, -2.5e-05]})");
  CHECK(compare_with_json(tensor_from_json(h, kCPU), h) == "");
}

TEST_CASE("op driver: comparison reports dtype, shape and the first value outside the tolerance") {
  Tensor x = from_vector<double>({1.0, 2.0, 3.0}, {3});
  CHECK(compare_with_json(x, json::parse(R"({"dtype": "float32", "shape": [3], "data": [1, 2, 3]})")) ==
        "dtype float64, expected float32");
  CHECK(compare_with_json(x, json::parse(R"({"dtype": "float64", "shape": [1, 3], "data": [1, 2, 3]})")) ==
        "shape [3], expected [1, 3]");
  CHECK(compare_with_json(x, json::parse(R"({"dtype": "float64", "shape": [3], "data": [1, 2, 3.00000000001]})")) == "");
  std::string d = compare_with_json(x, json::parse(R"({"dtype": "float64", "shape": [3], "data": [1, 2.000001, 3]})"));
  CHECK(d.rfind("element 1: 2, expected 2.000001", 0) == 0);
  Tensor i = from_vector<int64_t>({4, 5}, {2});
  CHECK(compare_with_json(i, json::parse(R"({"dtype": "int64", "shape": [2], "data": [4, 6]})")) ==
        "element 1: 5, expected 6");
  Tensor b = from_vector<bool>({true, false}, {2});
  CHECK(compare_with_json(b, json::parse(R"({"dtype": "bool", "shape": [2], "data": [true, false]})")) == "");
  CHECK(tolerance_for(kFloat16).rtol == 1e-3);
  CHECK(tolerance_for(kBFloat16).atol == 1e-2);
  CHECK(tolerance_for(kInt32).atol == 0);
}

TEST_CASE("op driver: sample inputs are deterministic, inside the domain, and typed") {
  const OpInfo& op = op_info("div.Tensor");
  auto a = sample_args(op, 0, kFloat32, kCPU), b = sample_args(op, 0, kFloat32, kCPU);
  std::vector<double> other = a["other"].to_tensor().to_vector<double>();
  CHECK(other == b["other"].to_tensor().to_vector<double>());
  for (double v : other) CHECK((v >= 0.5 && v <= 2));  // div's domain for `other`
  auto ints = sample_args(op, 0, kUInt8, kCPU);
  CHECK(ints["self"].to_tensor().dtype() == kUInt8);
  for (double v : ints["self"].to_tensor().to_vector<double>()) CHECK((v >= 0 && v <= 2 && v == std::round(v)));

  const OpInfo& nll = op_info("nll_loss");
  auto n = sample_args(nll, 0, kFloat64, kCPU);
  CHECK(n["target"].to_tensor().dtype() == kInt64);  // the sample's own dtype wins
  CHECK(n["self"].to_tensor().dtype() == kFloat64);
}

TEST_CASE("op driver: call_op fills positional gaps with defaults and passes keyword-only args by name") {
  const OpInfo& op = op_info("add.Tensor");
  Tensor x = from_vector<double>({1, 2}, {2});
  Value r = call_op(op, {{"self", x}, {"other", x}, {"alpha", Value(int64_t(3))}});
  CHECK(r.to_tensor().to_vector<double>() == std::vector<double>{4, 8});
  const OpInfo& sum = op_info("sum.dim_IntList");
  Tensor m = from_vector<double>({1, 2, 3, 4}, {2, 2});
  Value s = call_op(sum, {{"self", m}, {"keepdim", Value(true)}});  // dim takes its default (None)
  CHECK(s.to_tensor().sizes().equals({1, 1}));
  CHECK(s.to_tensor().item<double>() == 10);
  CHECK_THROWS_AS(call_op(op, {{"self", x}, {"bogus", x}}), std::runtime_error);
}

TEST_CASE("op driver: gradcheck accepts true gradients and catches a wrong one") {
  TensorList x0 = {from_vector<double>({0.5, -1.0, 2.0}, {3})};
  size_t compared = 0;
  Fn cube = [](const TensorList& x) { return TensorList{x[0] * x[0] * x[0]}; };
  CHECK(compare_jacobians(cube, x0, {"x"}, kCPU, compared) == "");
  CHECK(compared == 9);
  // The second order through the vector-Jacobian product: 3 inputs + 3 vector entries.
  TensorList xv = {x0[0], from_vector<double>({1.0, 0.5, -2.0}, {3})};
  CHECK(compare_jacobians(vjp_fn(cube, 1), xv, {"x", "v"}, kCPU, compared) == "");

  // x * detach(x) hides one factor from autograd: its gradient is half the true one.
  Fn half_blind = [](const TensorList& x) { return TensorList{x[0] * x[0].detach()}; };
  std::string why = compare_jacobians(half_blind, x0, {"x"}, kCPU, compared);
  CHECK(why.rfind("d output0[0] / d x[0]: autograd 0.5, finite differences 1", 0) == 0);
}
