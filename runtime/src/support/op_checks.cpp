// Argument checks shared by every generated op.
#include <cstring>
#include "core/allocator_registry.h"
#include "kiln/op_support.h"

namespace kiln::support {

namespace {
std::string dtype_list(DTypeSet mask) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i)
    if (mask & dtype_bit(DType(i))) out += std::string(out.empty() ? "" : ", ") + dtype_name(DType(i));
  return out;
}
}  // namespace

void check_dtype(const char* op, const char* arg, const TensorBase& t, DTypeSet mask) {
  if (!t.defined()) return;
  if (KILN_LIKELY(mask & dtype_bit(t.dtype()))) return;
  KILN_FAIL(DTypeError, op, arg, "dtype ", dtype_name(t.dtype()), " is not supported; ", op, " supports: ",
            dtype_list(mask));
}

void check_dtype(const char* op, const char* arg, DType dtype, DTypeSet mask) {
  if (KILN_LIKELY(mask & dtype_bit(dtype))) return;
  KILN_FAIL(DTypeError, op, arg, "dtype ", dtype_name(dtype), " is not supported; ", op, " supports: ",
            dtype_list(mask));
}

void check_factory_device(const char* op, Device device) {
  if (KILN_UNLIKELY(!device.is_cpu())) kiln::detail::allocator_for_op(device, op);
}

void check_options_dtype(const char* op, const TensorOptions& options, DTypeSet mask) {
  if (options.dtype_given) check_dtype(op, "dtype", options.dtype, mask);
}

void check_zero_dim(const char* op, const char* arg, const TensorBase& t) {
  KILN_CHECK(t.dim() == 0, ValueError, op, arg, op, "_ only supports a 0-dimensional ", arg,
             " tensor, but got tensor with ", t.dim(), " dimension(s).");
}

void check_same_device(const char* op, std::initializer_list<NamedTensor> tensors) {
  const TensorBase* first = nullptr;
  const char* first_name = "";
  for (const NamedTensor& nt : tensors) {
    if (!nt.tensor->defined()) continue;
    if (!first) {
      first = nt.tensor;
      first_name = nt.name;
      continue;
    }
    // 0-d wrapped numbers are host values that may meet tensors of any device, as in PyTorch.
    if (nt.tensor->impl()->is_wrapped_number) continue;
    KILN_CHECK(nt.tensor->device() == first->device(), DeviceError, op, nt.name, "expected all tensors on one device, but '",
               first_name, "' is on ", first->device().str(), " and '", nt.name, "' is on ", nt.tensor->device().str());
  }
}

Device list_device(const char* op, const char* arg, const TensorList& tensors) {
  KILN_CHECK(!tensors.empty(), ValueError, op, arg, "expected a non-empty list of tensors");
  Device d = tensors[0].device();
  for (size_t i = 1; i < tensors.size(); ++i)
    KILN_CHECK(tensors[i].device() == d, DeviceError, op, arg, "expected all tensors on one device, but element 0 is on ",
               d.str(), " and element ", i, " is on ", tensors[i].device().str());
  return d;
}

void check_out_no_grad(const char* op, const TensorBase& out, std::initializer_list<const TensorBase*> inputs) {
  if (!GradMode::is_enabled()) return;
  bool any = autograd::requires_grad(out);
  for (const TensorBase* t : inputs) any = any || autograd::requires_grad(*t);
  KILN_CHECK(!any, AutogradError, op, "out",
             "functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad");
}

void check_alpha(const char* op, DType compute, const Scalar& alpha) {
  if (alpha.is_bool())
    KILN_CHECK(compute == DType::Bool, DTypeError, op, "alpha", "a boolean alpha is only supported for boolean results");
  if (!is_inexact(compute))
    KILN_CHECK(alpha.is_integral() || alpha.is_bool(), DTypeError, op, "alpha",
               "for integral input tensors, alpha must not be a floating point or complex number, got ", alpha.str());
}

namespace {
// "kiln::op" and "kiln::op.overload" both name `op`.
bool names_op(const std::string& raised_by, const char* op) {
  const size_t n = std::strlen(op);
  return raised_by.compare(0, n, op) == 0 && (raised_by.size() == n || raised_by[n] == '.' || raised_by[n] == '_');
}
[[noreturn]] void throw_kind(ErrorKind kind, const char* op, const std::string& what) {
  switch (kind) {
    case ErrorKind::Shape: throw ShapeError(op, "", what);
    case ErrorKind::DType: throw DTypeError(op, "", what);
    case ErrorKind::Device: throw DeviceError(op, "", what);
    case ErrorKind::Index: throw IndexError(op, "", what);
    case ErrorKind::Value: throw ValueError(op, "", what);
    case ErrorKind::NotImplemented: throw NotImplementedError(op, "", what);
    case ErrorKind::Autograd: throw AutogradError(op, "", what);
    case ErrorKind::Internal: break;
  }
  throw InternalError(op, "", what);
}
}  // namespace

void rethrow_in(const char* op) {
  try {
    throw;
  } catch (const Error& e) {
    if (names_op(e.op(), op)) throw;
    std::string what = e.what();
    // raised by a helper without an op of its own ("kiln: argument 'size': ..."): it is this op's
    if (e.op().empty() && what.compare(0, 6, "kiln: ") == 0) what.erase(0, 6);
    throw_kind(e.kind(), op, what);
  }
}

}  // namespace kiln::support
