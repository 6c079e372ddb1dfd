#ifndef KILN_RUNTIME_INCLUDE_KILN_OP_ENTRY_H_
#define KILN_RUNTIME_INCLUDE_KILN_OP_ENTRY_H_
// What a generated op entry needs besides the ops its formulas call: argument checks, kernel
// lookup, the pointwise and structured-kernel machinery, and autograd glue, all over
// TensorBase. It names no op, so the entries of pointwise and kernel ops, which include it
// (and kiln/gen/ops/<name>.h for each op their formulas call), are not recompiled when
// another op is added. Not part of the public API.
#include <initializer_list>
#include <vector>
#include "kiln/autograd/formulas.h"
#include "kiln/autograd/forward_grad.h"
#include "kiln/autograd/graph.h"
#include "kiln/destination.h"
#include "kiln/dispatch.h"
#include "kiln/meta/inputs.h"  // each structured entry includes its own family's header too
#include "kiln/pointwise.h"
#include "kiln/tensor_base.h"

namespace kiln {
namespace support {

// DTypeError unless t's dtype is in `mask` (bit i = DType i); the message lists the dtypes.
void check_dtype(const char* op, const char* arg, const TensorBase& t, DTypeSet mask);
void check_dtype(const char* op, const char* arg, DType dtype, DTypeSet mask);
// DeviceError naming `op` when a factory is asked for a device this build or machine lacks.
void check_factory_device(const char* op, Device device);
// A factory's requested dtype, when the caller gave one (else the factory's own rule picks it).
void check_options_dtype(const char* op, const TensorOptions& options, DTypeSet mask);
// ValueError unless t is 0-d (the "value tensor" overloads: masked_fill.Tensor, ...).
void check_zero_dim(const char* op, const char* arg, const TensorBase& t);
struct NamedTensor {
  const TensorBase* tensor;
  const char* name;
};
// DeviceError naming the first argument on another device than the first one.
void check_same_device(const char* op, std::initializer_list<NamedTensor> tensors);

// ---- autograd glue ----
bool any_defined(const TensorBaseList& grads);
TensorBase grad_or_zeros(const TensorBaseList& grads, size_t i, const Node::List<Node::OutputMeta>& meta);
void add_output_meta(Node& node, const TensorBase& output);
// Undo broadcasting (sum to `sizes`) and cast back to the input's dtype.
TensorBase finish_grad(const TensorBase& grad, IntArrayRef sizes, DType dtype);
void check_inplace(const TensorBase& self, const char* op);
void check_out_no_grad(const char* op, const TensorBase& out, std::initializer_list<const TensorBase*> inputs);
// add/sub: a floating or complex alpha cannot scale integers, a non-bool one cannot scale bools
// (PyTorch's rule; converting it would silently compute something else).
void check_alpha(const char* op, DType compute, const Scalar& alpha);
// In a catch handler of op `op`: rethrows the current kiln::Error, naming `op` first when an
// inner op raised it ("kiln::mv: kiln::mm: argument 'mat2': ..."), so the message names the op
// that was called. Every generated op function is wrapped in it (a function-try-block).
[[noreturn]] void rethrow_in(const char* op);

}  // namespace support
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_OP_ENTRY_H_
