// The error contract, targeted: cases the registry-wide sweep cannot derive from a schema
// (devices, index values, counts, empty reductions, in-place failures leaving operands alone).
#include <doctest/doctest.h>
#include <limits>
#include "error_contract.h"
#include "test_helpers.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/argmax.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/min.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor m23() { return from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}); }
}  // namespace

TEST_CASE("error contract: devices that do not exist here are a DeviceError") {
  Ledger L;
  L.expect_error("empty on cuda", "empty", {ErrorKind::Device}, {"cuda"}, [] { empty({2}, Device("cuda")); });
  L.expect_error("zeros on cuda", "zeros", {ErrorKind::Device}, {"cuda"}, [] { zeros({2}, Device("cuda")); });
  L.expect_error("to(cuda)", "to", {ErrorKind::Device}, {"cuda"}, [] { m23().to(Device("cuda")); });
  L.expect_error("unknown device", "Device", {ErrorKind::Device, ErrorKind::Value}, {"tpu"}, [] { Device("tpu"); });
  INFO(L.report());
  CHECK(L.failures().empty());
}

TEST_CASE("error contract: index values out of range") {
  Ledger L;
  const Tensor x = m23();
  L.expect_error("select index 5", "select", {ErrorKind::Index}, {"'index'", "5"},
                 [&] { call("select", {x, 1, 5}); });
  L.expect_error("select index -4", "select", {ErrorKind::Index}, {"'index'"}, [&] { call("select", {x, 1, -4}); });
  L.expect_error("narrow past the end", "narrow", {ErrorKind::Index, ErrorKind::Value}, {"'length'"},
                 [&] { call("narrow", {x, 1, 2, 5}); });
  L.expect_error("narrow start out of range", "narrow", {ErrorKind::Index}, {"'start'"},
                 [&] { call("narrow", {x, 1, 7, 1}); });
  L.expect_error("narrow negative length", "narrow", {ErrorKind::Index, ErrorKind::Value}, {"'length'"},
                 [&] { call("narrow", {x, 1, 0, -1}); });
  L.expect_error("slice step 0", "slice", {ErrorKind::Value}, {"'step'"},
                 [&] { call("slice", {x, 1, 0, 2, 0}); });
  L.expect_error("split size 0", "split", {ErrorKind::Value}, {"'split_size'"}, [&] { call("split", {x, 0}); });
  L.expect_error("split size -1", "split", {ErrorKind::Value}, {"'split_size'"}, [&] { call("split", {x, -1}); });
  L.expect_error("chunk 0", "chunk", {ErrorKind::Value}, {"'chunks'"}, [&] { call("chunk", {x, 0}); });
  L.expect_error("permute repeated dim", "permute", {ErrorKind::Value, ErrorKind::Index}, {"'dims'"},
                 [&] { call("permute", {x, std::vector<int64_t>{0, 0}}); });
  L.expect_error("permute wrong length", "permute", {ErrorKind::Value, ErrorKind::Shape}, {"'dims'"},
                 [&] { call("permute", {x, std::vector<int64_t>{0}}); });
  L.expect_error("view of the wrong numel", "view", {ErrorKind::Shape}, {"'size'"},
                 [&] { call("view", {x, std::vector<int64_t>{4, 2}}); });
  L.expect_error("view with two -1", "view", {ErrorKind::Value, ErrorKind::Shape}, {"'size'"},
                 [&] { call("view", {x, std::vector<int64_t>{-1, -1}}); });
  const Tensor logits = from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {2, 3});
  L.expect_error("nll_loss class 3 of 3", "nll_loss", {ErrorKind::Index}, {"'target'", "3"},
                 [&] { call("nll_loss", {logits, tensor<int64_t>({0, 3})}); });
  L.expect_error("cross_entropy class -2", "cross_entropy", {ErrorKind::Index}, {"'target'"},
                 [&] { call("cross_entropy", {logits, tensor<int64_t>({-2, 0})}); });
  // a target of self's shape holds class probabilities, so it must be floating; any other is indices
  L.expect_error("cross_entropy int64 probabilities", "cross_entropy", {ErrorKind::DType}, {"'target'"}, [&] {
    call("cross_entropy", {logits, zeros({2, 3}, TensorOptions(kInt64))});
  });
  L.expect_error("cross_entropy float indices", "cross_entropy", {ErrorKind::DType}, {"'target'"}, [&] {
    call("cross_entropy", {logits, zeros({2})});
  });
  L.expect_error("stack of different shapes", "stack", {ErrorKind::Shape}, {"'tensors'"},
                 [&] { call("stack", {TensorList{zeros({2}), zeros({3})}}); });
  L.expect_error("cat of no tensors", "cat", {ErrorKind::Value}, {"'tensors'"}, [&] { call("cat", {TensorList{}}); });
  L.expect_error("cat of different ranks", "cat", {ErrorKind::Shape}, {"'tensors'"},
                 [&] { call("cat", {TensorList{zeros({2, 2}), zeros({2})}}); });
  L.expect_error("where with a float condition", "where", {ErrorKind::DType}, {"'condition'"},
                 [&] { call("where", {zeros({2}), zeros({2}), ones({2})}); });
  L.expect_error("masked_fill with a float mask", "masked_fill", {ErrorKind::DType}, {"'mask'"},
                 [&] { call("masked_fill", {zeros({2}), zeros({2}), 1.0}); });
  L.expect_error("bitwise_and on floats", "bitwise_and", {ErrorKind::DType}, {"argument '"},
                 [&] { call("bitwise_and", {zeros({2}), ones({2})}); });
  L.expect_error("gelu approximate='fast'", "gelu", {ErrorKind::Value}, {"'approximate'", "fast"},
                 [&] { call("gelu", {zeros({2})}, {{"approximate", "fast"}}); });
  L.expect_error("div rounding_mode='up'", "div", {ErrorKind::Value}, {"'rounding_mode'"},
                 [&] { call("div", {zeros({2}), ones({2})}, {{"rounding_mode", "up"}}); });
  L.expect_error("to an unknown dtype name", "to", {ErrorKind::Value, ErrorKind::DType}, {"'dtype'"},
                 [&] { call("to", {zeros({2}), "float33"}); });
  L.expect_error("no such op", "no_such_op", {ErrorKind::Value}, {"no_such_op"}, [] { call("no_such_op", {}); });
  MESSAGE("targeted index cases: " << L.tried());
  INFO(L.report());
  CHECK(L.failures().empty());
}

TEST_CASE("error contract: negative sizes in creation functions") {
  Ledger L;
  L.expect_error("empty({-1})", "empty", {ErrorKind::Value}, {"'size'", "-1"}, [] { empty({-1}); });
  L.expect_error("zeros({2,-3})", "zeros", {ErrorKind::Value}, {"'size'", "-3"}, [] { zeros({2, -3}); });
  L.expect_error("full({-2})", "full", {ErrorKind::Value}, {"'size'"}, [] { full({-2}, 1.0, DType::Float32); });
  L.expect_error("rand({-1})", "rand", {ErrorKind::Value}, {"'size'"}, [] { rand({-1}); });
  L.expect_error("randperm(-1)", "randperm", {ErrorKind::Value}, {"'n'"}, [] { randperm(-1); });
  L.expect_error("arange step 0", "arange", {ErrorKind::Value}, {"'step'"}, [] { arange(0, 5, 0, DType::Int64); });
  INFO(L.report());
  CHECK(L.failures().empty());
}

TEST_CASE("error contract: reductions over nothing") {
  Ledger L;
  const Tensor none = empty({0, 3});
  L.expect_error("max of empty", "max", {ErrorKind::Index, ErrorKind::Value}, {"'self'"}, [&] { max(none); });
  L.expect_error("min of empty", "min", {ErrorKind::Index, ErrorKind::Value}, {"'self'"}, [&] { min(none); });
  L.expect_error("argmax of empty", "argmax", {ErrorKind::Index, ErrorKind::Value}, {"'self'"}, [&] { argmax(none); });
  L.expect_error("max.dim over an empty dim", "max", {ErrorKind::Index, ErrorKind::Value}, {"'dim'"},
                 [&] { max(none, 0); });
  L.expect_error("amax over an empty dim", "amax", {ErrorKind::Index, ErrorKind::Value}, {"'dim'"},
                 [&] { amax(none, {0}); });
  INFO(L.report());
  CHECK(L.failures().empty());
  // reductions with an identity are defined on empty input, as in PyTorch
  kiln::testing::expect_values(sum(none), {}, {0});
  kiln::testing::expect_values(prod(none), {}, {1});
  CHECK(std::isnan(mean(none).item<double>()));
  kiln::testing::expect_values(amax(none, {1}), {0}, {});
}

namespace {
// One in-place call that must fail and leave `self` (and `other`) as they were.
struct InplaceCase {
  const char* name;
  ErrorKind kind;
  Tensor self, other;
  std::function<void(Tensor&, const Tensor&)> op;
};
}  // namespace

TEST_CASE("error contract: a failed in-place op leaves its operands unchanged") {
  const Tensor f3 = from_vector<float>({1.5f, -2, 3}, {3});
  const Tensor f23 = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor i3 = tensor<int32_t>({1, 2, 3});
  const Tensor b3 = tensor<bool>({true, false, true});
  const Tensor iz = tensor<int32_t>({2, 0, 1});  // its zero is in the middle: element 0 is computable
  using T = Tensor;
  std::vector<InplaceCase> cases = {
      // the result would need a bigger shape than self
      {"add_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.add_(o); }},
      {"sub_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.sub_(o); }},
      {"mul_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.mul_(o); }},
      {"div_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.div_(o); }},
      {"pow_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.pow_(o); }},
      {"maximum_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.maximum_(o); }},
      {"minimum_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.minimum_(o); }},
      {"remainder_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.remainder_(o); }},
      {"fmod_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.fmod_(o); }},
      {"atan2_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.atan2_(o); }},
      {"hypot_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.hypot_(o); }},
      {"lerp_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.lerp_(o, 0.5); }},
      {"eq_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.eq_(o); }},
      {"lt_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.lt_(o); }},
      {"logical_and_", ErrorKind::Shape, f3, f23, [](T& s, const T& o) { s.logical_and_(o); }},
      {"add_ (length 2)", ErrorKind::Shape, f3, zeros({2}), [](T& s, const T& o) { s.add_(o); }},
      // the result's dtype cannot be stored in self
      {"div_ on int", ErrorKind::DType, i3, i3, [](T& s, const T& o) { s.div_(o); }},
      {"add_ float into int", ErrorKind::DType, i3, f3, [](T& s, const T& o) { s.add_(o); }},
      {"mul_ float into bool", ErrorKind::DType, b3, f3, [](T& s, const T& o) { s.mul_(o); }},
      {"sqrt_ on int", ErrorKind::DType, i3, T(), [](T& s, const T&) { s.sqrt_(); }},
      {"sigmoid_ on int", ErrorKind::DType, i3, T(), [](T& s, const T&) { s.sigmoid_(); }},
      {"exp_ on bool", ErrorKind::DType, b3, T(), [](T& s, const T&) { s.exp_(); }},
      {"neg_ on bool", ErrorKind::DType, b3, T(), [](T& s, const T&) { s.neg_(); }},
      {"bitwise_and_ on float", ErrorKind::DType, f3, f3, [](T& s, const T& o) { s.bitwise_and_(o); }},
      {"bitwise_not_ on float", ErrorKind::DType, f3, T(), [](T& s, const T&) { s.bitwise_not_(); }},
      {"add_ int into int with a float alpha", ErrorKind::DType, i3, i3, [](T& s, const T& o) { s.add_(o, 0.5); }},
      {"clamp_ int with a float bound", ErrorKind::DType, i3, T(), [](T& s, const T&) { s.clamp_(0.5); }},
      // integer arithmetic PyTorch refuses (ZeroDivisionError) fails before the first element is written
      {"remainder_ by an integer zero", ErrorKind::Value, i3, iz, [](T& s, const T& o) { s.remainder_(o); }},
      {"fmod_ by an integer zero", ErrorKind::Value, i3, iz, [](T& s, const T& o) { s.fmod_(o); }},
      {"floor_divide_ by an integer zero", ErrorKind::Value, i3, iz, [](T& s, const T& o) { s.floor_divide_(o); }},
      {"pow_ int by a negative integer", ErrorKind::Value, i3, T(), [](T& s, const T&) { s.pow_(-2); }},
  };
  Ledger L;
  for (InplaceCase& c : cases) {
    Tensor self = c.self.clone();
    const std::vector<double> before = self.to_vector<double>();
    const uint32_t version = self.version();
    const std::vector<double> other_before = c.other.defined() ? c.other.to_vector<double>() : std::vector<double>{};
    const std::string op = std::string(c.name).substr(0, std::string(c.name).find(' '));
    L.expect_error(c.name, op.substr(0, op.size() - 1), {c.kind}, {"argument '"}, [&] { c.op(self, c.other); });
    if (self.to_vector<double>() != before) L.fail(c.name, "self changed although the op failed");
    if (c.other.defined() && c.other.to_vector<double>() != other_before) L.fail(c.name, "other changed");
    if (self.version() != version) L.fail(c.name, "self's version moved although nothing was written");
  }
  MESSAGE("in-place failure cases: " << L.tried());
  INFO(L.report());
  CHECK(L.failures().empty());
}

TEST_CASE("error contract: huge sizes are refused, not overflowed") {
  Ledger L;
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  L.expect_error("empty of 2^62 x 4", "empty", {ErrorKind::Value, ErrorKind::Device}, {"'size'"},
                 [&] { empty({big, 4}); });
  L.expect_error("zeros of 2^62 x 2^62", "zeros", {ErrorKind::Value}, {"'size'", "too many elements"},
                 [&] { zeros({big, big}); });
  // a view whose element count does not fit int64 cannot exist (its numel would wrap)
  L.expect_error("expand to 2^62 x 2^62", "expand", {ErrorKind::Value}, {"argument 'size'", "too many elements"},
                 [&] { call("expand", {zeros({1, 1}), std::vector<int64_t>{big, big}}); });
  INFO(L.report());
  CHECK(L.failures().empty());
}
