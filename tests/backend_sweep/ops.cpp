// Which ops the sweep runs, on which dtypes: generated/coverage_declared.json lists every
// registry op with the dtypes each backend declares.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include "sweep.h"

namespace kiln::sweep {

namespace {
std::vector<DType> dtypes_of(const nlohmann::json& backends, const std::string& device_type) {
  std::vector<DType> out;
  if (!backends.contains(device_type)) return out;
  for (const auto& name : backends.at(device_type).value("declared", nlohmann::json::array())) {
    auto d = dtype_from_name(name.get<std::string>());
    if (!d) throw std::runtime_error("coverage_declared.json: unknown dtype " + name.dump());
    out.push_back(*d);
  }
  return out;
}
}  // namespace

std::vector<SweptOp> swept_ops(const std::string& device_type, const std::string& op_filter) {
  const std::string path = std::string(KILN_GENERATED_DIR) + "/coverage_declared.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path + " (run the build first)");
  const nlohmann::json declared = nlohmann::json::parse(in);
  const std::regex filter(op_filter);
  std::vector<SweptOp> ops;
  for (const auto& entry : declared.at("ops")) {
    SweptOp op{entry.at("name").get<std::string>(), {}, {}};
    if (!op_filter.empty() && !std::regex_search(op.name, filter)) continue;
    const std::vector<DType> cpu = dtypes_of(entry.at("backends"), "cpu");
    for (DType d : dtypes_of(entry.at("backends"), device_type))
      (std::find(cpu.begin(), cpu.end(), d) != cpu.end() ? op.dtypes : op.device_only).push_back(d);
    if (!op.dtypes.empty() || !op.device_only.empty()) ops.push_back(std::move(op));
  }
  std::sort(ops.begin(), ops.end(), [](const SweptOp& a, const SweptOp& b) { return a.name < b.name; });
  return ops;
}

}  // namespace kiln::sweep
