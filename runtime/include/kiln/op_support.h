#ifndef KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
#define KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
// What the generated entries of composite ops and call-by-name need: kiln/op_entry.h (checks,
// kernel lookup, autograd glue), the API without the op functions (kiln/core.h: each entry
// includes the kiln/gen/api/<op>.h it calls) and the registry's binding. Not part of the public API.
#include <initializer_list>
#include <tuple>
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/op_entry.h"
#include "kiln/value.h"

namespace kiln::support {

Device list_device(const char* op, const char* arg, const TensorList& tensors);

// Views share storage with their base: remember the root base and how to make the view again
// from it (`replay`, the view op on another tensor), so an in-place op on the view can rebase
// the base's history (kiln/autograd/graph.h, ViewInfo). The outputs of an op returning several
// views get no replay: autograd refuses in-place ops on them, as PyTorch.
void mark_view(const Tensor& result, const Tensor& base, ViewReplay replay = {});
void mark_view(const TensorList& results, const Tensor& base);
template <typename... T>
void mark_view(const std::tuple<T...>& results, const Tensor& base) {
  std::apply([&](const auto&... r) { (mark_view(r, base), ...); }, results);
}
// True when an op handed back one of its inputs unchanged (contiguous() of a contiguous
// tensor): then nothing is recorded, the input keeps its own history.
bool returns_input(const Tensor& result, std::initializer_list<const Tensor*> inputs);
template <typename... T>
bool returns_input(const std::tuple<T...>&, std::initializer_list<const Tensor*>) { return false; }

// ---- call by name ----
struct ArgSpec {
  const char* name;
  const char* type;  // schema type, e.g. "Tensor", "int[1]?", "Scalar"
  bool kwarg_only;
  bool optional;  // has a default (or is a Tensor? that may be omitted)
};
struct RegistryEntry {
  const char* full_name;   // "add.Tensor"
  const char* name;        // "add"
  const char* signature;
  const char* doc;
  const ArgSpec* args;
  int num_args;
  Value (*fn)(const Value* const* bound);  // bound[i] null = not given (use the default)
  // The out= and in-place variants; null when the op has none.
  Value (*out_fn)(const Value* const* bound, const TensorList& out);
  int num_results;  // tensors out_fn writes
  Value (*inplace_fn)(const Value* const* bound);
};
// The entries of one registry file (generated/src/registry/<file>.cpp); the table joins them.
struct RegistryPart {
  const RegistryEntry* entries;
  size_t size;
};
enum class Variant { Function, Out, Inplace };
Value call_by_name(const RegistryEntry* entries, size_t n, const std::string& name, const std::vector<Value>& args,
                   const Kwargs& kwargs, Variant variant = Variant::Function, const TensorList* out = nullptr);

}  // namespace kiln::support
#endif  // KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
