#ifndef KILN_TESTS_SUPPORT_OP_CATALOG_H_
#define KILN_TESTS_SUPPORT_OP_CATALOG_H_
// generated/op_samples/<op>.json (op_samples.json split per op) as the test driver sees it: each op's schema arguments
// and samples, and the one place that turns named argument values into a kiln::call.
#include <map>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "kiln/value.h"

namespace kiln::testing {

using json = nlohmann::json;

struct ArgInfo {
  std::string name, type;  // type as in the schema: "Tensor", "int[]?", "Scalar" ...
  bool kwarg_only = false, has_default = false;
  bool mutable_ = false;  // Tensor(a!): the op writes into it
  json default_value;
  bool is_tensor() const { return type == "Tensor" || type == "Tensor?"; }
  // Tensor?[] too (advanced indexing): its entries may be None, an undefined Tensor
  bool is_tensor_list() const { return type == "Tensor[]" || type == "Tensor?[]"; }
};

struct OpInfo {
  std::string name, signature;
  std::vector<std::string> dtypes, differentiable_inputs;
  bool gradgrad = true;
  std::string jvp = "none";    // how forward-mode AD passes the op (codegen views.jvp_mode)
  bool factory = false;        // takes dtype/layout/device/requires_grad keywords
  bool random = false;         // draws from the generator: every call is reseeded
  bool compare_values = true;  // false: sizes, dtype and device only (empty, random ops)
  bool reads_storage = false;  // as_strided: other layouts of an input give other values
  // per output, false where the op gives it no gradient (output_differentiability); empty: all
  std::vector<bool> differentiable_outputs;
  std::vector<std::string> variants;  // "function", "method", "inplace", "out"
  // An op of an in-place kernel family (meta: foreach ...): the arguments it writes, which the
  // tests compare (call_op returns them, in schema order) instead of what it returns.
  std::vector<std::string> writes;
  bool writes_arg(const std::string& name) const;
  bool has_variant(const std::string& v) const;
  std::vector<ArgInfo> args;
  json samples;  // array of {arg: spec}
  const ArgInfo* arg(const std::string& name) const;
};

// The op's entry; throws std::runtime_error naming the file when it is missing.
const OpInfo& op_info(const std::string& name);
std::string source_path(const std::string& relative);  // KILN_SOURCE_DIR + "/" + relative
// The "cases" of a checked-in reference file (tests/reference/...), parsed; throws
// std::runtime_error naming the file when it cannot be read.
json reference_cases(const std::string& relative);

// A non-tensor argument from its JSON value (numbers keep int vs float, dtype names become DType).
Value plain_value(const ArgInfo& arg, const json& v);
enum class Variant { Function, Out, Inplace };
// A factory without tensor inputs (zeros, arange, rand) makes the dtype and device under test
// when asked: they are added as its dtype and device keywords unless the sample names them.
void add_factory_options(const OpInfo& op, std::map<std::string, Value>& named, DType dtype, Device device);
// Calls `op` (or its out= variant, writing into `out`, or its in-place one) with named values:
// positional arguments in schema order up to the last one given (gaps take their defaults),
// keyword-only ones as kwargs. A random op's default generator is reseeded first, so one sample
// gives one result whatever the variant or input layout.
Value call_op(const OpInfo& op, const std::map<std::string, Value>& named, Variant variant = Variant::Function,
              const TensorList& out = {});
// For an op that writes its arguments (OpInfo::writes), the function variant returns them as a
// tuple (a list argument as one TensorList), so results compare as for any op.
// Every tensor of a result (Tensor, tuple or list), in order.
std::vector<Tensor> flatten_result(const Value& v);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_OP_CATALOG_H_
