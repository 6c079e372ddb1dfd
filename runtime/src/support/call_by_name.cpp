// Binding of positional and keyword arguments to an op's schema, as Python calls do.
#include <cstring>
#include "kiln/op_support.h"

namespace kiln::support {
namespace {

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
  for (int i = 0; i < e.num_args; ++i)
    if (!bound[i] && !e.args[i].optional) return detail::cat("missing required argument '", e.args[i].name, "'");
  return {};
}

}  // namespace

Value call_by_name(const RegistryEntry* entries, size_t n, const std::string& name, const std::vector<Value>& args,
                   const Kwargs& kwargs) {
  const bool has_overload = name.find('.') != std::string::npos;
  const Value* bound[32];
  std::string reasons;
  bool known = false;
  for (size_t i = 0; i < n; ++i) {
    const RegistryEntry& e = entries[i];
    if (has_overload ? name != e.full_name : name != e.name) continue;
    known = true;
    std::string why = bind(e, args, kwargs, bound);
    if (why.empty()) {
      // Overloads differ by argument kinds too (pow(Tensor, Scalar) vs pow(Tensor, Tensor)):
      // without an explicit overload name, try the next one when this one rejects a kind.
      if (has_overload) return e.fn(bound);
      try {
        return e.fn(bound);
      } catch (const ValueError& err) {
        if (std::strstr(err.what(), "expected ") == nullptr || std::strstr(err.what(), ", got ") == nullptr) throw;
        why = err.what();
      }
    }
    reasons += detail::cat("\n  ", e.signature, ": ", why);
  }
  KILN_CHECK(known, ValueError, name, "", "no op named '", name, "' (see kiln::ops() for the list)");
  KILN_FAIL(ValueError, name, "", "arguments do not match any overload:", reasons);
}

}  // namespace kiln::support
