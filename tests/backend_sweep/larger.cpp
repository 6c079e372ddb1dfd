// Larger versions of the registry's samples: the per-op tests run shapes of a few elements,
// which never reach a device kernel's multi-block paths, tails or vectorized loads.
#include <algorithm>
#include <cmath>
#include "sample_inputs.h"
#include "sweep.h"

namespace kiln::sweep {

namespace {
using json = nlohmann::json;

int64_t dims_above_one(const json& shape) {
  return std::count_if(shape.begin(), shape.end(), [](const json& d) { return d.get<int64_t>() > 1; });
}
int64_t numel_of_json(const json& shape) {
  int64_t n = 1;
  for (const json& d : shape) n *= d.get<int64_t>();
  return n;
}

// Every random tensor's shape in `sample` (literal values keep theirs).
std::vector<json*> tensor_shapes(const OpInfo& op, json& sample) {
  std::vector<json*> shapes;
  for (auto it = sample.begin(); it != sample.end(); ++it) {
    const testing::ArgInfo* arg = op.arg(it.key());
    json& spec = it.value();
    if (!arg || !spec.is_object()) continue;
    if (arg->is_tensor() && spec.contains("shape") && !spec.contains("values")) {
      shapes.push_back(&spec["shape"]);
    } else if (arg->is_tensor_list() && spec.contains("shapes")) {
      for (json& s : spec["shapes"]) shapes.push_back(&s);
    } else if (arg->is_tensor_list() && spec.contains("items")) {
      for (json& item : spec["items"])
        if (item.is_object() && !item.contains("values")) shapes.push_back(&item["shape"]);
    }
  }
  return shapes;
}

// The most elements any of `shapes` holds once its dims above 1 are multiplied by k.
double biggest_scaled(const std::vector<json*>& shapes, int64_t k) {
  double most = 0;
  for (const json* s : shapes)
    most = std::max(most, double(numel_of_json(*s)) * std::pow(double(k), dims_above_one(*s)));
  return most;
}

// `op` with sample `index` scaled by k: one factor on every dim above 1 keeps equal dims equal
// and broadcast (size-1) dims broadcasting.
OpInfo scaled_by(const OpInfo& op, size_t index, int64_t k) {
  OpInfo scaled = op;
  for (json* s : tensor_shapes(scaled, scaled.samples[index]))
    for (json& d : *s)
      if (d.get<int64_t>() > 1) d = d.get<int64_t>() * k;
  return scaled;
}

// Elements of all the op's results on the CPU (a kiln::Error when it refuses the sample).
double result_numel(const OpInfo& op, size_t index, DType dtype) {
  double n = 0;
  for (const Tensor& t : testing::flatten_result(testing::call_op(op, testing::sample_args(op, index, dtype, kCPU))))
    n += double(t.numel());
  return n;
}
}  // namespace

bool larger_sample(const OpInfo& op, size_t index, DType dtype, int64_t numel, OpInfo& scaled, std::string& why) {
  json sample = op.samples.at(index);
  const std::vector<json*> shapes = tensor_shapes(op, sample);
  if (shapes.empty()) {
    why = "no random tensor input to scale (sizes come from arguments)";
    return false;
  }
  if (biggest_scaled(shapes, 2) == biggest_scaled(shapes, 1)) {
    why = "no tensor dim above 1 to scale";
    return false;
  }
  int64_t k = 2;
  while (biggest_scaled(shapes, k) < double(numel)) ++k;
  // Results may grow faster than inputs (cartesian_prod, outer products): their growth from
  // factor 1 to 2 and from 2 to 4 (the larger of the two: a data-dependent size such as
  // masked_select's is noisy on few elements) predicts it, and k shrinks until they stay within
  // 4 times `numel`.
  double at[3] = {0, 0, 0};  // results' elements at factors 1, 2, 4
  for (int i = 0; i < 3; ++i) {
    try {
      at[i] = std::max(1.0, result_numel(i ? scaled_by(op, index, int64_t(1) << i) : op, index, dtype));
    } catch (const kiln::Error& e) {
      why = std::string(i ? "the CPU refuses the scaled shapes (a " : "the CPU refuses the sample (a ") +
            error_kind_name(e.kind()) + ")";
      return false;
    }
  }
  const double growth = std::max(std::log2(at[1] / at[0]), std::log2(at[2] / at[1]));
  const double most = 4.0 * double(numel);
  while (k > 2 && at[0] * std::pow(double(k), growth) > most) --k;
  if (at[1] > most) {
    why = "its results grow too fast with its inputs";
    return false;
  }
  scaled = scaled_by(op, index, k);
  return true;
}

}  // namespace kiln::sweep
