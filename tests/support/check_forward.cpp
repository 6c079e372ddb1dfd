// check_forward: kiln against PyTorch's stored results, one coverage cell per dtype.
#include <doctest/doctest.h>
#include <algorithm>
#include <fstream>
#include <optional>
#include "coverage_log.h"
#include "op_catalog.h"
#include "op_testing.h"
#include "sample_inputs.h"
#include "tensor_json.h"

namespace kiln::testing {
namespace {

// Outcome of one cell, folded over its cases: any failure fails it, any unverifiable case
// leaves it unverified; it passes only when every case was compared and matched.
struct Cell {
  CellStatus status = CellStatus::Pass;
  std::string detail;
  void fail(const std::string& why) {
    if (status != CellStatus::Fail) detail.clear();
    status = CellStatus::Fail;
    if (detail.empty()) detail = why;
  }
  void unverified(const std::string& why) {
    if (status == CellStatus::Fail) return;
    status = CellStatus::Unverified;
    if (detail.empty()) detail = why;
  }
};

std::string describe(const std::exception& e) {
  if (auto* k = dynamic_cast<const kiln::Error*>(&e))
    return std::string("kiln raised ") + error_kind_name(k->kind()) + " error: " + k->what();
  return std::string("unexpected exception: ") + e.what();
}

std::optional<json> load_reference(const std::string& op) {
  std::ifstream in(source_path("tests/reference/" + op + ".json"));
  if (!in) return std::nullopt;
  return json::parse(in);
}

std::map<std::string, Value> reference_args(const OpInfo& op, const json& args, DType dtype, Device device) {
  std::map<std::string, Value> named;
  for (const auto& [name, v] : args.items()) {
    const ArgInfo* a = op.arg(name);
    if (!a) throw std::runtime_error("reference argument '" + name + "' is not in the schema (run tools/kiln refs)");
    if (a->is_tensor()) {
      named[name] = v.is_null() ? Value() : Value(tensor_from_json(v, device));
    } else if (a->is_tensor_list()) {
      TensorList list;
      for (const json& t : v) list.push_back(t.is_null() ? Tensor() : tensor_from_json(t, device));  // Tensor?[]: None
      named[name] = Value(std::move(list));
    } else {
      named[name] = plain_value(*a, v);
    }
  }
  add_factory_options(op, named, dtype, device);
  return named;
}

// Empty when kiln's result matches the stored one (its values too unless the op's are
// unspecified or random), on the device under test.
std::string compare_result(const OpInfo& op, const Value& result, const json& want, Device device) {
  std::vector<Tensor> got = flatten_result(result);
  std::vector<const json*> expected;
  if (want.is_array()) {
    for (const json& t : want) expected.push_back(&t);
  } else {
    expected.push_back(&want);
  }
  if (got.size() != expected.size())
    return "returned " + std::to_string(got.size()) + " tensors, expected " + std::to_string(expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].device() != device) return "result on " + got[i].device().str() + ", expected " + device.str();
    std::string d = op.compare_values ? compare_with_json(got[i], *expected[i]) : compare_metadata_with_json(got[i], *expected[i]);
    if (!d.empty()) return expected.size() > 1 ? "output " + std::to_string(i) + ": " + d : d;
  }
  return "";
}

void check_case(const OpInfo& op, const json& c, DType dtype, Device device, Cell& cell) {
  std::string where = "sample " + std::to_string(c.value("sample", 0)) + ": ";
  bool torch_failed = c.contains("error") && !c["error"].is_null();
  try {
    Value result = call_op(op, reference_args(op, c.at("args"), dtype, device));
    if (torch_failed) {
      cell.unverified(where + "PyTorch raised: " + c["error"].get<std::string>());
      return;
    }
    std::string d = compare_result(op, result, c.at("result"), device);
    // 16-bit dtypes: PyTorch's rounding of intermediates, or float32 math rounded once.
    if (!d.empty() && c.contains("alt_result") && compare_result(op, result, c["alt_result"], device).empty()) d.clear();
    if (!d.empty()) cell.fail(where + d);
  } catch (const kiln::Error& e) {
    // Both refuse: nothing to compare. kiln alone refusing a declared dtype is a failure.
    if (torch_failed) cell.unverified(where + "PyTorch raised: " + c["error"].get<std::string>());
    else cell.fail(where + describe(e));
  } catch (const std::exception& e) {
    cell.fail(where + describe(e));
  }
}

// No PyTorch data for this dtype: run the samples on random inputs so crashes and errors
// still show, but never call the cell passing.
void check_without_reference(const OpInfo& op, DType dtype, Device device, const std::string& why, Cell& cell) {
  for (size_t i = 0; i < op.samples.size(); ++i) {
    try {
      flatten_result(call_op(op, sample_args(op, i, dtype, device)));
    } catch (const std::exception& e) {
      cell.fail("sample " + std::to_string(i) + ": " + describe(e));
    }
  }
  cell.unverified(why);
}

bool sample_uses_dtype_under_test(const OpInfo& op) {
  if (op.samples.empty()) return false;
  std::map<std::string, Value> factory_options;
  add_factory_options(op, factory_options, DType::Float32, kCPU);
  if (!factory_options.empty() && !op.samples[0].contains("dtype")) return true;  // passed as its dtype keyword
  for (const auto& [name, spec] : op.samples[0].items()) {
    const ArgInfo* a = op.arg(name);
    if (a && (a->is_tensor() || a->is_tensor_list()) && spec.is_object() && !spec.value("bool", false) &&
        (!spec.contains("dtype") || spec["dtype"].is_null()))
      return true;
  }
  return false;
}

// An undeclared dtype must be refused with a kiln::Error, never computed silently.
void check_undeclared(const OpInfo& op, const OpTestSpec& spec, Device device) {
  if (!sample_uses_dtype_under_test(op)) return;
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = DType(i);
    if (std::find(spec.dtypes.begin(), spec.dtypes.end(), d) != spec.dtypes.end()) continue;
    try {
      call_op(op, sample_args(op, 0, d, device));
      FAIL_CHECK(op.name << " [" << std::string(spec.backend) << "]: accepted undeclared dtype " << std::string(dtype_name(d))
                         << " (expected a kiln::Error)");
    } catch (const kiln::Error&) {
    } catch (const std::exception& e) {
      FAIL_CHECK(op.name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(d)) << "]: " << describe(e));
    }
  }
}

}  // namespace

void check_forward(const OpTestSpec& spec) {
  const std::string op_name = spec.op;
  const OpInfo* op = nullptr;
  std::optional<json> ref;
  Device device;
  try {
    device = Device(std::string(spec.backend));
    op = &op_info(op_name);
    ref = load_reference(op_name);
  } catch (const std::exception& e) {
    for (DType d : spec.dtypes) record_cell(op_name, spec.backend, dtype_name(d), "forward", CellStatus::Fail, e.what());
    FAIL_CHECK(op_name << ": " << e.what());
    return;
  }
  for (DType d : spec.dtypes) {
    Cell cell;
    std::vector<const json*> cases;
    if (ref)
      for (const json& c : ref->at("cases"))
        if (c.at("dtype").get<std::string>() == dtype_name(d)) cases.push_back(&c);
    if (!ref) {
      check_without_reference(*op, d, device, "no PyTorch reference: tests/reference/" + op_name + ".json is missing (tools/kiln refs)", cell);
    } else if (cases.empty()) {
      check_without_reference(*op, d, device, std::string("the reference has no ") + dtype_name(d) + " cases (tools/kiln refs)", cell);
    } else {
      for (const json* c : cases) check_case(*op, *c, d, device, cell);
    }
    record_cell(op_name, spec.backend, dtype_name(d), "forward", cell.status, cell.detail);
    if (cell.status == CellStatus::Fail)
      FAIL_CHECK(op_name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(d)) << "]: " << cell.detail);
    else if (cell.status == CellStatus::Unverified)
      MESSAGE(op_name << " [" << std::string(spec.backend) << ", " << std::string(dtype_name(d)) << "] unverified: " << cell.detail);
  }
  check_undeclared(*op, spec, device);
}

}  // namespace kiln::testing
