#ifndef KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
#define KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
// What generated op code needs besides the public API: argument checks, kernel lookup,
// autograd glue and call-by-name binding. Not part of the public API.
#include <initializer_list>
#include <tuple>
#include "kiln/autograd.h"
#include "kiln/autograd/formulas.h"
#include "kiln/destination.h"
#include "kiln/dispatch.h"
#include "kiln/meta.h"
#include "kiln/gen/composite.h"
#include "kiln/kiln.h"
#include "kiln/pointwise.h"
#include "kiln/value.h"

namespace kiln::support {

// DTypeError unless t's dtype is in `mask` (bit i = DType i); the message lists the dtypes.
void check_dtype(const char* op, const char* arg, const Tensor& t, uint16_t mask);
void check_dtype(const char* op, const char* arg, DType dtype, uint16_t mask);
// DeviceError naming `op` when a factory is asked for a device this build or machine lacks.
void check_factory_device(const char* op, Device device);
// A factory's requested dtype, when the caller gave one (else the factory's own rule picks it).
void check_options_dtype(const char* op, const TensorOptions& options, uint16_t mask);
// ValueError unless t is 0-d (the "value tensor" overloads: masked_fill.Tensor, ...).
void check_zero_dim(const char* op, const char* arg, const Tensor& t);
struct NamedTensor {
  const Tensor* tensor;
  const char* name;
};
// DeviceError naming the first argument on another device than the first one.
void check_same_device(const char* op, std::initializer_list<NamedTensor> tensors);
Device list_device(const char* op, const char* arg, const TensorList& tensors);

// ---- autograd glue ----
bool any_defined(const TensorList& grads);
Tensor grad_or_zeros(const TensorList& grads, size_t i, const std::vector<Node::OutputMeta>& meta);
void add_output_meta(Node& node, const Tensor& output);
// Undo broadcasting (sum to `sizes`) and cast back to the input's dtype.
Tensor finish_grad(const Tensor& grad, IntArrayRef sizes, DType dtype);
void check_inplace(const Tensor& self, const char* op);
void check_out_no_grad(const char* op, const Tensor& out, std::initializer_list<const Tensor*> inputs);
// add/sub: a floating or complex alpha cannot scale integers, a non-bool one cannot scale bools
// (PyTorch's rule; converting it would silently compute something else).
void check_alpha(const char* op, DType compute, const Scalar& alpha);
// In a catch handler of op `op`: rethrows the current kiln::Error, naming `op` first when an
// inner op raised it ("kiln::mv: kiln::mm: argument 'mat2': ..."), so the message names the op
// that was called. Every generated op function is wrapped in it (a function-try-block).
[[noreturn]] void rethrow_in(const char* op);

// Views share storage with their base; remember it so in-place autograd can refuse them.
void mark_view(const Tensor& result, const Tensor& base);
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
enum class Variant { Function, Out, Inplace };
Value call_by_name(const RegistryEntry* entries, size_t n, const std::string& name, const std::vector<Value>& args,
                   const Kwargs& kwargs, Variant variant = Variant::Function, const TensorList* out = nullptr);

}  // namespace kiln::support
#endif  // KILN_RUNTIME_INCLUDE_KILN_OP_SUPPORT_H_
