// Binding of positional and keyword arguments to an op's schema, as Python calls do.
#include <cstring>
#include "kiln/op_support.h"

namespace kiln::support {
namespace {

// Whether a Value can be passed as an argument of schema type `type` ("int[1]?", "Tensor"...).
bool fits(const Value& v, std::string_view type) {
  const bool optional = !type.empty() && type.back() == '?';
  if (optional) type.remove_suffix(1);
  if (v.is_none()) return optional;
  using K = Value::Kind;
  const K k = v.kind();
  const bool is_list = !type.empty() && type.back() == ']';
  const std::string_view base = type.substr(0, type.find('['));
  if (base == "Tensor" || base == "Tensor?") return is_list ? k == K::TensorList : k == K::Tensor;  // Tensor?[] too
  if (base == "int") return is_list ? (k == K::IntList || k == K::Int) : k == K::Int;
  if (base == "float") return is_list ? (k == K::DoubleList || k == K::IntList) : (k == K::Double || k == K::Int);
  if (base == "bool") return k == K::Bool;
  if (base == "Scalar") return v.is_number();
  if (base == "ScalarType") return k == K::DType || k == K::String;
  if (base == "str") return k == K::String;
  // by value or by name ("cuda:0", "strided", "channels_last")
  if (base == "Device") return k == K::Device || k == K::String;
  if (base == "Layout") return k == K::Layout || k == K::String;
  if (base == "MemoryFormat") return k == K::MemoryFormat || k == K::String;
  if (base == "Generator") return k == K::Generator;
  return false;
}

// Binds into `bound`; returns an empty string on success, else why it does not fit.
std::string bind(const RegistryEntry& e, const std::vector<Value>& args, const Kwargs& kwargs, const Value** bound) {
  for (int i = 0; i < e.num_args; ++i) bound[i] = nullptr;
  int positional = 0;
  while (positional < e.num_args && !e.args[positional].kwarg_only) ++positional;
  if (int(args.size()) > positional)
    return detail::cat("takes ", positional, " positional argument(s) but ", args.size(), " were given");
  for (size_t i = 0; i < args.size(); ++i) bound[i] = &args[i];
  for (const auto& [key, value] : kwargs) {
    int found = -1;
    for (int i = 0; i < e.num_args; ++i)
      if (key == e.args[i].name) found = i;
    if (found < 0) return detail::cat("got an unexpected keyword argument '", key, "'");
    if (bound[found]) return detail::cat("got multiple values for argument '", key, "'");
    bound[found] = &value;
  }
  for (int i = 0; i < e.num_args; ++i) {
    if (!bound[i]) {
      if (!e.args[i].optional) return detail::cat("missing required argument '", e.args[i].name, "'");
    } else if (!fits(*bound[i], e.args[i].type)) {
      return detail::cat("argument '", e.args[i].name, "' expected ", e.args[i].type, ", got ", bound[i]->kind_name());
    }
  }
  return {};
}

}  // namespace

Value call_by_name(const RegistryEntry* entries, size_t n, const std::string& name, const std::vector<Value>& args,
                   const Kwargs& kwargs, Variant variant, const TensorList* out) {
  // "add" tries add's overloads in order (add.Tensor, ...); "add.Tensor" names one, and
  // "prod.default" (as in torch.ops.aten) the one without an overload name.
  const bool has_overload = name.find('.') != std::string::npos;
  const std::string exact = name.size() > 8 && name.compare(name.size() - 8, 8, ".default") == 0
                                ? name.substr(0, name.size() - 8) : name;
  const Value* bound[32];
  std::string reasons;
  bool known = false;
  for (size_t i = 0; i < n; ++i) {
    const RegistryEntry& e = entries[i];
    if (has_overload ? exact != e.full_name : name != e.name) continue;
    known = true;
    if (variant == Variant::Out && !e.out_fn) {
      reasons += detail::cat("\n  ", e.signature, ": has no out= variant");
      continue;
    }
    if (variant == Variant::Inplace && !e.inplace_fn) {
      reasons += detail::cat("\n  ", e.signature, ": has no in-place variant");
      continue;
    }
    if (variant == Variant::Out && int(out->size()) != e.num_results) {
      reasons += detail::cat("\n  ", e.signature, ": out= takes ", e.num_results, " tensor(s), got ", out->size());
      continue;
    }
    const std::string why = bind(e, args, kwargs, bound);
    if (why.empty()) {
      if (variant == Variant::Out) return e.out_fn(bound, *out);
      return variant == Variant::Inplace ? e.inplace_fn(bound) : e.fn(bound);
    }
    reasons += detail::cat("\n  ", e.signature, ": ", why);
  }
  KILN_CHECK(known, ValueError, name, "", "no op named '", name, "' (kiln::ops() lists them)");
  KILN_FAIL(ValueError, name, "", "the arguments match no overload:", reasons);
}

}  // namespace kiln::support
