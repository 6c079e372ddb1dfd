// The error contract, derived from the registry: every op in kiln::ops() is called by name
// with its first sample from generated/op_samples.json, then with that sample broken one way
// at a time. Targeted cases (devices, indices, in-place) are in test_error_contract_targeted.cpp.
#include <doctest/doctest.h>
#include <cstdint>
#include <limits>
#include "error_contract.h"
#include "op_catalog.h"
#include "sample_inputs.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

using Named = std::map<std::string, Value>;
const std::set<ErrorKind> kValue{ErrorKind::Value};

// The exact overload: "prod" alone would also try prod.dim_int.
std::string exact_name(const OpInfo& op) {
  return op.name.find('.') == std::string::npos ? op.name + ".default" : op.name;
}

Value run(const OpInfo& op, const Named& named) {
  Kwargs kwargs(named.begin(), named.end());  // every argument by keyword
  return call(exact_name(op), {}, kwargs);
}

bool declares(const OpInfo& op, DType t) {
  for (const std::string& d : op.dtypes)
    if (dtype_from_name(d) == t) return true;
  return false;
}

DType dtype_under_test(const OpInfo& op) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int64})
    if (declares(op, t)) return t;
  return *dtype_from_name(op.dtypes.at(0));
}

// Tensor arguments the sample gives (not lists, not None).
std::vector<std::string> tensor_args(const OpInfo& op, const Named& named) {
  std::vector<std::string> out;
  for (const ArgInfo& a : op.args) {
    auto it = named.find(a.name);
    if (a.is_tensor() && it != named.end() && it->second.is_tensor()) out.push_back(a.name);
  }
  return out;
}

// The same arguments with every tensor replaced by make(tensor) (lists too).
template <typename Fn>
Named map_tensors(const Named& named, Fn make) {
  Named out = named;
  for (auto& [name, v] : out) {
    if (v.is_tensor()) v = Value(make(v.to_tensor()));
    if (v.kind() == Value::Kind::TensorList) {
      TensorList list;
      for (const Tensor& t : v.to_tensor_list()) list.push_back(make(t));
      v = Value(std::move(list));
    }
  }
  return out;
}

void check_results(const Value& v) {
  if (v.is_none()) return;  // an op returning () (it wrote its mutable arguments)
  for (const Tensor& t : flatten_result(v)) {
    REQUIRE(t.defined());
    for (int64_t s : t.sizes()) REQUIRE(s >= 0);
  }
}

void binding_cases(Ledger& L, const OpInfo& op, const Named& named) {
  const std::string& n = op.name;
  // one positional argument too many
  L.expect_error(n + ": extra positional argument", n, kValue, {"positional"}, [&] {
    std::vector<Value> args;
    for (const ArgInfo& a : op.args) {
      if (a.kwarg_only) continue;
      auto it = named.find(a.name);
      args.push_back(it != named.end() ? it->second : a.has_default ? plain_value(a, a.default_value) : Value());
    }
    args.push_back(Value(int64_t(1)));
    call(exact_name(op), args);
  });
  L.expect_error(n + ": unknown keyword", n, kValue, {"'bogus_arg'"}, [&] {
    Named bad = named;
    bad["bogus_arg"] = Value(int64_t(1));
    run(op, bad);
  });
  for (const ArgInfo& a : op.args) {
    if (!a.has_default && named.count(a.name)) {
      L.expect_error(n + ": missing '" + a.name + "'", n, kValue, {"'" + a.name + "'"}, [&] {
        Named bad = named;
        bad.erase(a.name);
        run(op, bad);
      });
    }
    // a value of the wrong kind: a string, or a number where strings are accepted
    const bool takes_string = a.type.rfind("str", 0) == 0 || a.type.rfind("ScalarType", 0) == 0;
    L.expect_error(n + ": wrong kind for '" + a.name + "'", n, kValue, {"'" + a.name + "'"}, [&] {
      Named bad = named;
      bad[a.name] = takes_string ? Value(2.5) : Value("not a " + a.type);
      run(op, bad);
    });
  }
}

// Whether sample 0 gives some Tensor (or list) the dtype under test: where every tensor's
// dtype is fixed (_amp_update_scale_: float32 scale, int32 tracker) no dtype can be undeclared.
bool takes_dtype_under_test(const OpInfo& op) {
  if (op.samples.empty()) return false;
  for (const auto& [name, spec] : op.samples[0].items()) {
    const ArgInfo* a = op.arg(name);
    if (a && (a->is_tensor() || a->is_tensor_list()) && spec.is_object() &&
        (!spec.contains("dtype") || spec["dtype"].is_null()))
      return true;
  }
  return op.factory;
}

void dtype_case(Ledger& L, const OpInfo& op) {
  if (!takes_dtype_under_test(op)) return;
  for (DType bad : {DType::Float32, DType::Int64, DType::Bool, DType::Complex64}) {
    if (declares(op, bad)) continue;
    L.expect_error(op.name + ": undeclared dtype " + dtype_name(bad), op.name, {ErrorKind::DType}, {"argument '"},
                   [&] { run(op, sample_args(op, 0, bad, Device())); });
    return;
  }
}

void broadcast_case(Ledger& L, const OpInfo& op, const Named& named) {
  std::vector<std::string> tensors = tensor_args(op, named);
  // outer: any two vectors fit; so does any 1-d index tensor of tensor_split. mm, bmm: the last
  // dim of mat2 is free, its first is not.
  if (tensors.size() < 2 || op.name == "outer" || op.name == "tensor_split.tensor_indices_or_sections") return;
  // Ops that read as many places as their index names: any index shape fits (gather's along dim).
  static const std::set<std::string> free_index{
      "gather",         "index_select", "index_fill.int_Scalar", "index_fill.int_Tensor", "take",
      "take_along_dim", "embedding"};
  if (free_index.count(op.name)) return;
  // embedding_bag: any number of indices fits offsets (the last bag takes what follows its start)
  if (op.name.rfind("embedding_bag", 0) == 0) return;
  // searchsorted/bucketize: any values shape fits a 1-D sequence, and so does any sequence length.
  if (op.name == "searchsorted.Tensor" || op.name == "bucketize.Tensor") return;
  // convolutions: a kernel of any size that fits the padded input is valid ('same' padding and
  // transposed convolutions fit any)
  if (op.name.rfind("conv", 0) == 0) return;
  // adaptive pools' backwards: an input of any size pools to grad_output's size
  if (op.name == "_adaptive_avg_pool2d_backward" || op.name == "adaptive_max_pool2d_backward") return;
  if (op.name == "histogram.bins_tensor") return;                 // any number of edges fits any input
  if (op.name == "quantile" || op.name == "nanquantile") return;  // q: any number of quantiles fits
  // ctc_loss: padded targets may be wider than every target, and log_probs may have any number of classes.
  if (op.name == "ctc_loss.IntList" || op.name == "ctc_loss.Tensor" || op.name == "_ctc_loss_grad") return;
  const bool contraction = op.name == "mm" || op.name == "bmm";
  const std::string& victim = tensors[1];
  bool others_fixed = false;  // another tensor whose last dim is neither 1 nor 11
  for (const std::string& t : tensors) {
    if (t == victim) continue;
    IntArrayRef s = named.at(t).to_tensor().sizes();
    others_fixed = others_fixed || (!s.empty() && s.back() != 1 && s.back() != 11);
  }
  if (!others_fixed) return;
  const Tensor& v = named.at(victim).to_tensor();
  std::vector<int64_t> shape = v.sizes().vec();
  if (shape.empty()) shape.push_back(11);
  else if (contraction) shape.front() = 11;
  else shape.back() = 11;
  Named bad = named;
  bad[victim] = Value(v.dtype() == DType::Bool ? full(shape, true, DType::Bool) : full(shape, 1, v.dtype()));
  L.expect_error(op.name + ": '" + victim + "' of shape " + shape_str(shape), op.name, {ErrorKind::Shape},
                 {"argument '"}, [&] { run(op, bad); });
}

void dim_cases(Ledger& L, const OpInfo& op, const Named& named) {
  static const std::set<std::string> dim_names{"dim", "dim0", "dim1", "dim2", "start_dim", "end_dim"};
  for (const ArgInfo& a : op.args) {
    if (!dim_names.count(a.name)) continue;
    for (int64_t d : {int64_t(9), int64_t(-10)}) {
      Named bad = named;
      bad[a.name] = a.type.rfind("int[", 0) == 0 ? Value(std::vector<int64_t>{d}) : Value(d);
      L.expect_error(op.name + ": " + a.name + "=" + std::to_string(d), op.name, {ErrorKind::Index},
                     {"'" + a.name + "'"}, [&] { run(op, bad); });
    }
  }
}

void negative_size_cases(Ledger& L, const OpInfo& op, const Named& named) {
  for (const ArgInfo& a : op.args) {
    if (a.type != "int[]" || !(a.name == "size" || a.name == "shape" || a.name == "input_sizes")) continue;
    auto it = named.find(a.name);
    std::vector<int64_t> sizes = it != named.end() ? it->second.to_int_list() : std::vector<int64_t>{};
    if (sizes.empty()) sizes.push_back(1);
    sizes[0] = -3;
    Named bad = named;
    bad[a.name] = Value(sizes);
    L.expect_error(op.name + ": negative " + a.name, op.name, {ErrorKind::Value, ErrorKind::Shape},
                   {"'" + a.name + "'", "-3"}, [&] { run(op, bad); });
  }
}

void special_value_cases(Ledger& L, const OpInfo& op, const Named& named, DType dt) {
  // Empty tensors: the leading dim of every tensor becomes 0. A result or an error, sane shapes.
  L.expect_no_crash(op.name + ": empty inputs", [&] {
    check_results(run(op, map_tensors(named, [](const Tensor& t) {
                        if (t.dim() == 0) return t;
                        std::vector<int64_t> s = t.sizes().vec();
                        s[0] = 0;
                        return empty(s, t.dtype());
                      })));
  });
  if (is_floating(dt)) {
    for (double special : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
      L.expect_no_crash(op.name + ": all " + std::to_string(special), [&] {
        check_results(run(op, map_tensors(named, [&](const Tensor& t) {
                            return is_floating(t.dtype()) ? full(t.sizes(), special, t.dtype()) : t;
                          })));
      });
    }
  }
  if (declares(op, DType::Int64)) {
    // Integer corner cases: division by zero and INT64_MIN / -1 must not trap.
    Named ints = sample_args(op, 0, DType::Int64, Device());
    std::vector<std::string> tensors = tensor_args(op, ints);
    for (int variant = 0; variant < 2; ++variant) {
      Named bad = ints;
      for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor& t = ints.at(tensors[i]).to_tensor();
        if (t.dtype() != DType::Int64) continue;
        int64_t value = variant == 0 ? 0 : i == 0 ? std::numeric_limits<int64_t>::min() : -1;
        bad[tensors[i]] = Value(full(t.sizes(), value, DType::Int64));
      }
      L.expect_no_crash(op.name + (variant == 0 ? ": int64 zeros" : ": int64 min by -1"),
                        [&] { check_results(run(op, bad)); });
    }
  }
}

}  // namespace

TEST_CASE("error contract: every op in the registry, broken one way at a time") {
  Ledger L;
  int ops_covered = 0;
  for (const OpSchema& schema : ops()) {
    const OpInfo& op = op_info(schema.name);
    const DType dt = dtype_under_test(op);
    Named named = sample_args(op, 0, dt, Device());
    try {
      check_results(run(op, named));  // the unbroken sample works
    } catch (const std::exception& e) {
      L.fail(op.name + ": its own sample", e.what());
      continue;
    }
    ++ops_covered;
    binding_cases(L, op, named);
    dtype_case(L, op);
    broadcast_case(L, op, named);
    dim_cases(L, op, named);
    negative_size_cases(L, op, named);
    special_value_cases(L, op, named, dt);
  }
  MESSAGE("error contract: " << L.tried() << " cases over " << ops_covered << " ops");
  CHECK(ops_covered == int(ops().size()));
  CHECK(L.tried() > 1000);
  INFO(L.report());
  CHECK(L.failures().empty());
}
