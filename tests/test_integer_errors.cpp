// Integer arithmetic with no integer answer raises on the CPU as PyTorch 1.13 does: division,
// remainder and fmod by zero (RuntimeError: ZeroDivisionError there, kiln::ValueError here), and
// an integer tensor raised to a negative integer Scalar. Values below are PyTorch's.
#include <doctest/doctest.h>
#include <functional>
#include <limits>
#include <string>
#include "test_helpers.h"
#include "kiln/gen/api/div.h"
#include "kiln/gen/api/floor_divide.h"
#include "kiln/gen/api/fmod.h"
#include "kiln/gen/api/pow.h"
#include "kiln/gen/api/remainder.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using BinaryOp = std::function<Tensor(const Tensor&, const Tensor&)>;

struct DivisionOp {
  const char* name;  // the op the error names
  BinaryOp f;
};

const DivisionOp kDivisionOps[] = {
    {"floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); }},
    {"remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); }},
    {"fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); }},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); }},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); }},
};

// Runs f, which must raise ValueError naming `op` and the argument `arg`.
void check_value_error(const std::string& op, const std::string& arg, const std::function<void()>& f) {
  try {
    f();
    FAIL(op << ": no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Value);
    CHECK(std::string(e.what()).find(op) != std::string::npos);
    CHECK(std::string(e.what()).find("'" + arg + "'") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("integer division, remainder and fmod by zero raise ValueError in every integer dtype") {
  for (DType dt : {DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64}) {
    const Tensor a = tensor<int64_t>({5, 7, 3}).to(dt);
    const Tensor zero_in_middle = tensor<int64_t>({2, 0, 1}).to(dt);
    for (const DivisionOp& op : kDivisionOps) {
      INFO(op.name << " " << dtype_name(dt));
      check_value_error(op.name, "other", [&] { op.f(a, zero_in_middle); });
      check_value_error(op.name, "other", [&] { op.f(a, zeros({}, dt)); });               // a 0-d divisor
      check_value_error(op.name, "other", [&] { op.f(a, zeros({1}, dt).expand({3})); });  // broadcast
      CHECK_NOTHROW(op.f(a, tensor<int64_t>({2, 3, 1}).to(dt)));
      CHECK_NOTHROW(op.f(zeros({0}, dt), zeros({0}, dt)));  // nothing to divide
    }
  }
}

TEST_CASE("integer division by zero: the values PyTorch gives around it, and floats are not checked") {
  const Tensor a = tensor<int64_t>({5, -7, 3});
  const Tensor b = tensor<int64_t>({2, 2, -2});
  CHECK(floor_divide(a, b).to_vector<int64_t>() == std::vector<int64_t>{2, -4, -2});
  CHECK(remainder(a, b).to_vector<int64_t>() == std::vector<int64_t>{1, 1, -1});
  CHECK(fmod(a, b).to_vector<int64_t>() == std::vector<int64_t>{1, -1, 1});
  CHECK(div(a, b, "trunc").to_vector<int64_t>() == std::vector<int64_t>{2, -3, -1});
  // a float divisor promotes: IEEE results, no error (torch: a.float() // 0 == [inf, -inf, inf])
  const std::vector<float> q = floor_divide(a.to(DType::Float32), zeros({3})).to_vector<float>();
  CHECK(q[0] == std::numeric_limits<float>::infinity());
  CHECK(q[1] == -std::numeric_limits<float>::infinity());
  // the check runs on the value cast to the compute dtype: uint8 // tensor(256) divides by 0
  check_value_error("floor_divide", "other", [] { floor_divide(tensor<uint8_t>({1}), full({}, 256, DType::Int64)); });
  // true division of integers is float division
  CHECK(div(a, zeros({}, DType::Int64)).to_vector<float>()[0] == std::numeric_limits<float>::infinity());
}

TEST_CASE("failed integer division leaves the destination untouched: out= and in-place") {
  const Tensor a = tensor<int32_t>({5, 7, 3});
  const Tensor zero_in_middle = tensor<int32_t>({2, 0, 1});
  Tensor out = full({3}, 9, DType::Int32);
  check_value_error("remainder", "other", [&] { remainder_out(out, a, zero_in_middle); });
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>{9, 9, 9});
  Tensor empty_out = empty({0}, DType::Int32);
  check_value_error("fmod", "other", [&] { fmod_out(empty_out, a, zero_in_middle); });
  CHECK(empty_out.numel() == 0);  // not resized either
  Tensor self = a.clone();
  check_value_error("remainder", "other", [&] { self.remainder_(zero_in_middle); });
  // PyTorch 1.13 has written self[0] = 1 by then; kiln checks first
  CHECK(self.to_vector<int32_t>() == std::vector<int32_t>{5, 7, 3});
}

TEST_CASE("integers to a negative integer Scalar power raise, a Tensor exponent follows PyTorch") {
  const Tensor a = tensor<int64_t>({5, -7, 3, 1, -1});
  for (DType dt : {DType::Int8, DType::Int16, DType::Int32, DType::Int64}) {
    INFO(dtype_name(dt));
    check_value_error("pow", "exponent", [&] { pow(a.to(dt), -1); });
    Tensor self = a.to(dt);
    check_value_error("pow", "exponent", [&] { self.pow_(-2); });
    CHECK(self.to_vector<int64_t>() == std::vector<int64_t>{5, -7, 3, 1, -1});
  }
  // a float exponent promotes: torch.tensor([5, -7, 3]).pow(-1.0) == [0.2, -0.1429, 0.3333]
  std::vector<float> r = pow(a, -1.0).to_vector<float>();
  CHECK(r[0] == doctest::Approx(0.2f));
  CHECK(r[1] == doctest::Approx(-1.0f / 7));
  CHECK(pow(a, 2).to_vector<int64_t>() == std::vector<int64_t>{25, 49, 9, 1, 1});
  // Tensor exponents are not checked in PyTorch: 1 ** -k == 1, (-1) ** -k by parity, else 0
  CHECK(pow(a, tensor<int64_t>({-1, 2, -2, -3, -3})).to_vector<int64_t>() == std::vector<int64_t>{0, 49, 0, 1, -1});
}
