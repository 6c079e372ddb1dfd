#include "op_catalog.h"
#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include "kiln/random.h"

namespace kiln::testing {

std::string source_path(const std::string& relative) { return std::string(KILN_SOURCE_DIR) + "/" + relative; }

json reference_cases(const std::string& relative) {
  std::ifstream in(source_path(relative));
  if (!in.good()) throw std::runtime_error("cannot read " + source_path(relative));
  return json::parse(in).at("cases");
}

const ArgInfo* OpInfo::arg(const std::string& n) const {
  for (const ArgInfo& a : args)
    if (a.name == n) return &a;
  return nullptr;
}

bool OpInfo::has_variant(const std::string& v) const {
  for (const std::string& x : variants)
    if (x == v) return true;
  return false;
}

namespace {
// generated/op_samples/<name>.json: one op's entry of op_samples.json. A test process reads only
// the ops it tests (parsing the whole registry's samples cost each process most of its time).
OpInfo load_op(const std::string& name) {
  std::string path = std::string(KILN_GENERATED_DIR) + "/op_samples/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("op '" + name + "' is not in generated/op_samples/ (" + path + ")");
  std::stringstream text;
  text << in.rdbuf();
  const json o = json::parse(text.str());
  OpInfo info;
  info.name = o.at("name").get<std::string>();
  info.signature = o.value("signature", "");
  info.dtypes = o.value("dtypes", std::vector<std::string>{});
  info.differentiable_inputs = o.value("differentiable_inputs", std::vector<std::string>{});
  info.jvp = o.value("jvp", std::string("none"));
  info.gradgrad = o.value("gradgrad", true);
  info.variants = o.value("variants", std::vector<std::string>{});
  info.factory = o.value("factory", false);
  info.random = o.value("random", false);
  info.compare_values = o.value("compare", std::string("values")) == "values";
  info.reads_storage = o.value("reads_storage", false);
  info.differentiable_outputs = o.value("differentiable_outputs", std::vector<bool>{});
  info.writes = o.value("writes", std::vector<std::string>{});
  for (const json& a : o.at("args")) {
    ArgInfo arg;
    arg.name = a.at("name").get<std::string>();
    arg.type = a.at("type").get<std::string>();
    arg.kwarg_only = a.value("kwarg_only", false);
    arg.mutable_ = a.value("mutable", false);
    arg.has_default = a.value("has_default", false);
    arg.default_value = a.value("default", json());
    info.args.push_back(std::move(arg));
  }
  info.samples = o.value("samples", json::array());
  return info;
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool optional_type(const std::string& t) { return !t.empty() && t.back() == '?'; }
}  // namespace

const OpInfo& op_info(const std::string& name) {
  // loaded on first use; entries never move (node-based map), so references stay valid
  static std::mutex mutex;
  static std::unordered_map<std::string, OpInfo> catalog;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = catalog.find(name);
  if (it == catalog.end()) it = catalog.emplace(name, load_op(name)).first;
  return it->second;
}

Value plain_value(const ArgInfo& arg, const json& v) {
  const std::string& t = arg.type;
  if (v.is_null()) {
    if (optional_type(t)) return Value();
    throw std::runtime_error("argument '" + arg.name + "' of type " + t + " cannot be None");
  }
  if (starts_with(t, "int[")) {
    if (v.is_number_integer()) return Value(std::vector<int64_t>{v.get<int64_t>()});
    return Value(v.get<std::vector<int64_t>>());
  }
  if (starts_with(t, "int")) return Value(v.get<int64_t>());
  if (starts_with(t, "float[")) return Value(v.get<std::vector<double>>());  // float[]? (histogram's range)
  if (starts_with(t, "float")) return Value(v.get<double>());
  if (starts_with(t, "bool")) return Value(v.get<bool>());  // bool and bool? (sort.stable)
  if (starts_with(t, "str")) return Value(v.get<std::string>());
  if (starts_with(t, "ScalarType")) {
    auto d = dtype_from_name(v.get<std::string>());
    if (!d) throw std::runtime_error("argument '" + arg.name + "': unknown dtype " + v.dump());
    return Value(*d);
  }
  // devices, layouts and memory formats by name ("cuda:0", "strided", "channels_last")
  if (starts_with(t, "Device") || starts_with(t, "Layout") || starts_with(t, "MemoryFormat"))
    return Value(v.get<std::string>());
  if (starts_with(t, "Scalar")) {
    if (v.is_boolean()) return Value(v.get<bool>());
    if (v.is_number_integer()) return Value(v.get<int64_t>());
    if (v.is_number()) return Value(v.get<double>());
    if (v.is_array() && v.size() == 2) return Value(complex<double>(v[0].get<double>(), v[1].get<double>()));
  }
  throw std::runtime_error("argument '" + arg.name + "': cannot read " + v.dump() + " as " + t);
}

void add_factory_options(const OpInfo& op, std::map<std::string, Value>& named, DType dtype, Device device) {
  if (!op.factory) return;
  for (const ArgInfo& a : op.args)
    if (a.is_tensor() || a.is_tensor_list()) return;  // *_like: self decides, as the caller would leave it
  named.emplace("dtype", Value(dtype));
  named.emplace("device", Value(device));
}

namespace {
constexpr uint64_t kTestSeed = 20261125;  // any fixed seed: results are compared with each other
}  // namespace

Value call_op(const OpInfo& op, const std::map<std::string, Value>& named, Variant variant, const TensorList& out) {
  if (op.random) manual_seed(kTestSeed);
  for (const auto& [name, value] : named)
    if (!op.arg(name)) throw std::runtime_error("sample argument '" + name + "' is not in the schema of " + op.name);
  // Positional arguments run up to the last one the sample gives.
  size_t last = 0;
  for (size_t i = 0; i < op.args.size(); ++i)
    if (!op.args[i].kwarg_only && named.count(op.args[i].name)) last = i + 1;
  std::vector<Value> args;
  Kwargs kwargs;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const ArgInfo& a = op.args[i];
    auto it = named.find(a.name);
    if (a.kwarg_only) {
      if (it != named.end()) kwargs.emplace_back(a.name, it->second);
      continue;
    }
    if (i >= last) {
      if (!a.has_default)
        throw std::runtime_error("sample of " + op.name + " lacks required argument '" + a.name + "'");
      continue;
    }
    if (it != named.end()) args.push_back(it->second);
    else if (a.has_default) args.push_back(plain_value(a, a.default_value));
    else throw std::runtime_error("sample of " + op.name + " lacks required argument '" + a.name + "'");
  }
  if (variant == Variant::Function && !op.writes.empty()) {
    call(op.name, args, kwargs);
    std::vector<Value> written;
    for (const std::string& name : op.writes) written.push_back(named.at(name));
    return Value::tuple(std::move(written));
  }
  switch (variant) {
    case Variant::Out:
      return call_out(op.name, out, args, kwargs);
    case Variant::Inplace:
      return call_inplace(op.name, args, kwargs);
    default:
      return call(op.name, args, kwargs);
  }
}

std::vector<Tensor> flatten_result(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Tensor:
      return {v.to_tensor()};
    case Value::Kind::TensorList:
      return v.to_tensor_list();
    case Value::Kind::Tuple: {
      std::vector<Tensor> out;
      for (const Value& item : v.to_tuple())
        for (Tensor& t : flatten_result(item)) out.push_back(std::move(t));
      return out;
    }
    default:
      throw std::runtime_error(std::string("expected a tensor result, got ") + v.kind_name());
  }
}

bool OpInfo::writes_arg(const std::string& name) const {
  return std::find(writes.begin(), writes.end(), name) != writes.end();
}

}  // namespace kiln::testing
