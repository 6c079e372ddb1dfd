// Value: construction from C++ values and Scalars, typed accessors and their errors, str().
#include <doctest/doctest.h>

#include "kiln/value.h"

using namespace kiln;

TEST_CASE("value: kinds of constructed values") {
  CHECK(Value().is_none());
  CHECK(Value(std::nullopt).kind() == Value::Kind::None);
  CHECK(Value(true).kind() == Value::Kind::Bool);
  CHECK(Value(3).kind() == Value::Kind::Int);
  CHECK(Value(int64_t(3)).kind() == Value::Kind::Int);
  CHECK(Value(2.5).kind() == Value::Kind::Double);
  CHECK(Value(complex<double>(1, 2)).kind() == Value::Kind::Complex);
  CHECK(Value("tanh").kind() == Value::Kind::String);
  CHECK(Value(kFloat64).kind() == Value::Kind::DType);
  CHECK(Value(zeros({1})).is_tensor());
  CHECK(Value(std::vector<int64_t>{1, 2}).kind() == Value::Kind::IntList);
  CHECK(Value(TensorList{zeros({1})}).kind() == Value::Kind::TensorList);
  CHECK(Value::tuple({Value(1), Value(2.0)}).kind() == Value::Kind::Tuple);
  CHECK(Value(1).is_number());
  CHECK_FALSE(Value("x").is_number());
  CHECK(std::string(Value(zeros({1})).kind_name()) == "Tensor");
  CHECK(std::string(Value(2.0).kind_name()) == "float");
}

TEST_CASE("value: from Scalar keeps the number's kind") {
  CHECK(Value(Scalar(true)).kind() == Value::Kind::Bool);
  CHECK(Value(Scalar(7)).to_int() == 7);
  CHECK(Value(Scalar(0.25)).to_double() == 0.25);
  Value c{Scalar(complex<double>(1, -1))};
  CHECK(c.kind() == Value::Kind::Complex);
  CHECK(c.to_scalar() == Scalar(complex<double>(1, -1)));
}

TEST_CASE("value: typed accessors") {
  CHECK(Value(true).to_bool());
  CHECK(Value(-4).to_int() == -4);
  CHECK(Value(1.5).to_double() == 1.5);
  CHECK(Value(3).to_double() == 3.0);  // an int is a valid float argument
  CHECK(Value(3).to_scalar() == Scalar(3));
  CHECK(Value(false).to_scalar() == Scalar(false));
  CHECK(Value(2.5).to_scalar() == Scalar(2.5));
  CHECK(Value("mean").to_string() == "mean");
  CHECK(Value(kInt32).to_dtype() == kInt32);
  CHECK(Value("float64").to_dtype() == kFloat64);
  CHECK(Value("long").to_dtype() == kInt64);
  Tensor t = ones({2});
  CHECK(Value(t).to_tensor().is_same(t));
  CHECK(Value({1, 2, 3}).to_int_list() == std::vector<int64_t>{1, 2, 3});
  CHECK(Value(5).to_int_list() == std::vector<int64_t>{5});
  CHECK(Value(TensorList{t, t}).to_tensor_list().size() == 2);
  Value tup = Value::tuple({Value(1), Value("a")});
  const std::vector<Value>& items = tup.to_tuple();
  CHECK(items.size() == 2);
  CHECK(items[1].to_string() == "a");
}

TEST_CASE("value: mismatches throw ValueError naming op and argument") {
  try {
    Value(zeros({1})).to_int("sum", "dim");
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()) == "kiln::sum: argument 'dim': expected int, got Tensor");
    CHECK(e.op() == "sum");
    CHECK(e.arg() == "dim");
  }
  CHECK_THROWS_AS(Value(1).to_bool("sum", "keepdim"), ValueError);
  CHECK_THROWS_AS(Value(true).to_int("sum", "dim"), ValueError);
  CHECK_THROWS_AS(Value(1.5).to_int("sum", "dim"), ValueError);
  CHECK_THROWS_AS(Value("x").to_double("add", "alpha"), ValueError);
  CHECK_THROWS_AS(Value().to_tensor("add", "other"), ValueError);
  CHECK_THROWS_AS(Value(1.5).to_int_list("sum", "dim"), ValueError);
  CHECK_THROWS_AS(Value(kFloat32).to_string("gelu", "approximate"), ValueError);
  CHECK_THROWS_AS(Value(1).to_tensor_list("cat", "tensors"), ValueError);
  CHECK_THROWS_AS(Value(1).to_tuple("max", "result"), ValueError);
  CHECK_THROWS_AS(Value("x").to_scalar("add", "alpha"), ValueError);
  try {
    Value("float7").to_dtype("to", "dtype");
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()) == "kiln::to: argument 'dtype': expected ScalarType, got unknown dtype name 'float7'");
  }
  try {
    Value(1).to_dtype("to", "dtype");
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()) == "kiln::to: argument 'dtype': expected ScalarType, got int");
  }
}

TEST_CASE("value: str reads like Python") {
  CHECK(Value().str() == "None");
  CHECK(Value(true).str() == "True");
  CHECK(Value(-3).str() == "-3");
  CHECK(Value(0.1).str() == "0.1");
  CHECK(Value(2.0).str() == "2.0");
  CHECK(Value(complex<double>(1, 2)).str() == "(1+2j)");
  CHECK(Value("none").str() == "'none'");
  CHECK(Value(kFloat16).str() == "torch.float16");
  CHECK(Value({2, 3}).str() == "[2, 3]");
  CHECK(Value(tensor({1.5f})).str() == "tensor([1.5000])");
  CHECK(Value(TensorList{tensor({1}), tensor({2})}).str() ==
        "[tensor([1], dtype=torch.int32), tensor([2], dtype=torch.int32)]");
  CHECK(Value::tuple({Value(1), Value(2.5)}).str() == "(1, 2.5)");
  CHECK(Value::tuple({Value(1)}).str() == "(1,)");
}
