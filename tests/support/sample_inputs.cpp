#include "sample_inputs.h"
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include "tensor_json.h"

namespace kiln::testing {

uint64_t seed_for(const std::string& name, uint64_t salt) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return (h ^ salt) * 1099511628211ull;
}

namespace {
// Range an integral dtype can hold, so a domain like [-2, 2] still fits uint8.
std::pair<double, double> int_range(DType d) {
  switch (d) {
    case DType::UInt8: return {0, 255};
    case DType::Int8: return {-128, 127};
    case DType::Int16: return {-32768, 32767};
    default: return {-1e15, 1e15};
  }
}

Tensor random_tensor(std::mt19937_64& rng, const json& shape_json, DType dtype, const json& domain, bool mask,
                     Device device) {
  std::vector<int64_t> shape = shape_json.get<std::vector<int64_t>>();
  double lo = -2, hi = 2;
  if (domain.is_array() && domain.size() == 2) {
    lo = domain[0].get<double>();
    hi = domain[1].get<double>();
  }
  size_t n = size_t(numel_of(shape));
  std::uniform_real_distribution<double> uni(lo, hi);
  std::vector<double> re(n), im;
  if (mask || dtype == DType::Bool) {
    for (double& v : re) v = double(rng() & 1);
    return host_tensor(shape, DType::Bool, re).to(device);
  }
  for (double& v : re) v = uni(rng);
  if (is_complex(dtype)) {
    im.resize(n);
    for (double& v : im) v = uni(rng);
  }
  if (is_integral(dtype, false)) {
    auto [tlo, thi] = int_range(dtype);
    double ilo = std::max(tlo, std::ceil(lo)), ihi = std::min(thi, std::floor(hi));
    if (ilo > ihi) ilo = std::max(tlo, std::floor(lo)), ihi = std::min(thi, std::ceil(hi));  // no integer inside
    for (double& v : re) v = std::clamp(std::round(v), ilo, ihi);
  }
  Tensor t = host_tensor(shape, dtype, re, im);
  return device.is_cpu() ? t : t.to(device);
}

void flatten_values(const json& values, std::vector<double>& out) {
  if (!values.is_array()) return out.push_back(values.get<double>());
  for (const json& v : values) flatten_values(v, out);
}

DType spec_dtype(const json& spec, DType under_test) {
  if (!spec.contains("dtype") || spec["dtype"].is_null()) return under_test;
  auto d = dtype_from_name(spec["dtype"].get<std::string>());
  if (!d) throw std::runtime_error("unknown dtype in sample: " + spec["dtype"].dump());
  return *d;
}
}  // namespace

std::map<std::string, Value> sample_args(const OpInfo& op, size_t index, DType dtype, Device device) {
  if (index >= op.samples.size()) throw std::runtime_error(op.name + " has no sample " + std::to_string(index));
  std::mt19937_64 rng(seed_for(op.name, index * 16 + uint64_t(dtype)));
  std::map<std::string, Value> named;
  for (const auto& [name, spec] : op.samples[index].items()) {
    const ArgInfo* arg = op.arg(name);
    if (!arg) throw std::runtime_error("sample argument '" + name + "' is not in the schema of " + op.name);
    if (arg->is_tensor() && spec.is_null()) {
      named[name] = Value();
    } else if (arg->is_tensor() && spec.contains("values")) {  // literal values written in the sample
      std::vector<double> values;
      flatten_values(spec.at("values"), values);
      named[name] =
          host_tensor(spec.at("shape").get<std::vector<int64_t>>(), spec_dtype(spec, dtype), values).to(device);
    } else if (arg->is_tensor()) {
      named[name] = random_tensor(rng, spec.at("shape"), spec_dtype(spec, dtype), spec.value("domain", json()),
                                  spec.value("bool", false), device);
    } else if (arg->is_tensor_list() && spec.contains("items")) {  // Tensor?[]: each entry a spec or null
      TensorList list;
      for (const json& item : spec.at("items")) {
        if (item.is_null()) {
          list.emplace_back();
        } else if (item.contains("values")) {
          std::vector<double> values;
          flatten_values(item.at("values"), values);
          list.push_back(
              host_tensor(item.at("shape").get<std::vector<int64_t>>(), spec_dtype(item, dtype), values).to(device));
        } else {
          list.push_back(random_tensor(rng, item.at("shape"), spec_dtype(item, dtype), item.value("domain", json()),
                                       item.value("bool", false), device));
        }
      }
      named[name] = Value(std::move(list));
    } else if (arg->is_tensor_list()) {
      TensorList list;
      for (const json& shape : spec.at("shapes"))
        list.push_back(random_tensor(rng, shape, spec_dtype(spec, dtype), spec.value("domain", json()), false, device));
      named[name] = Value(std::move(list));
    } else {
      named[name] = plain_value(*arg, spec);
    }
  }
  add_factory_options(op, named, dtype, device);
  return named;
}

}  // namespace kiln::testing
