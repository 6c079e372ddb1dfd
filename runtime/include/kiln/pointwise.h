#ifndef KILN_RUNTIME_INCLUDE_KILN_POINTWISE_H_
#define KILN_RUNTIME_INCLUDE_KILN_POINTWISE_H_
// Shared preparation of pointwise ops: type promotion, broadcasting, device checks,
// input casting and output allocation. Generated stubs fill a PointwiseCall and hand it to
// the device's kernel; the kernel only loops.
#include "kiln/pointwise_dispatch.h"
#include "kiln/tensor_base.h"

namespace kiln {

// How an op's result dtype follows from its inputs (ATen's TensorIterator configurations).
enum class Promotion : int8_t {
  Default,     // result_type of inputs (add, mul, maximum ...)
  IntToFloat,  // like Default, then integral/bool -> default float (div, exp, sqrt ...)
  BoolResult,  // compute in result_type, output bool (eq, lt, isnan, logical_and ...)
  ComplexToReal, // compute in result_type, output its real type (abs of complex)
  SelfDType,   // compute and output in the first input's dtype (masked_fill)
};

struct PointwiseSpec {
  const char* op;                 // "add"
  const char* const* arg_names;   // tensor argument names, for error messages
  int8_t num_inputs;
  Promotion promotion;
  uint8_t bool_input_mask = 0;    // bit i: input i must be bool and is not promoted (where's condition)
  // Integer arithmetic that PyTorch refuses on the CPU (kernels cannot raise, so prepare checks
  // before anything is written): the input that must hold no zero when the op computes in an
  // integer dtype (floor_divide, remainder, fmod: ZeroDivisionError), and the promoting scalar
  // that must not be negative then (pow's exponent). -1: none.
  int8_t integer_divisor = -1;
  int8_t integer_exponent = -1;
};

struct PointwiseCall {
  const PointwiseSpec* spec = nullptr;
  TensorBase out;  // result buffer, broadcast shape
  int8_t num_inputs = 0;
  DType compute_dtype = DType::Float32;
  Scalar scalars[kMaxPointwiseScalars];       // non-tensor Scalar arguments, signature order
  bool scalar_given[kMaxPointwiseScalars] = {};  // false for a `Scalar?` passed as None
  int64_t choices[2] = {0, 0};                // `str` arguments as an index into their choices
  Device device() const { return out.device(); }

  // Input k, expanded to out's shape and cast to compute_dtype.
  const TensorBase& input(int k) const { return borrowed_[k] ? *borrowed_[k] : held_[k]; }
  // The caller's own tensor, when it needs neither: referenced, not counted (a call lives inside
  // the op that was handed its arguments, and each count change is an atomic, a visible share of
  // a one-element op).
  void borrow_input(int k, const TensorBase& t) {
    borrowed_[k] = &t;
    held_[k] = TensorBase();
  }
  void hold_input(int k, TensorBase t) {  // a cast or expanded view made for the call
    borrowed_[k] = nullptr;
    held_[k] = std::move(t);
  }

 private:
  const TensorBase* borrowed_[kMaxPointwiseInputs] = {};
  TensorBase held_[kMaxPointwiseInputs];
};
using PointwiseKernel = void (*)(const PointwiseCall&);

namespace pointwise {

// result_type over tensors (0-d and wrapped numbers weigh less, as in PyTorch).
DType result_type(std::initializer_list<const TensorBase*> inputs);
// The dtype a Python number of this kind takes (bool, int64, the default float or complex dtype):
// in promotion, and for torch.full's result without a dtype.
DType scalar_dtype(const Scalar& s);
DType result_type(const TensorBase* const* inputs, int n, const Scalar* const* scalars = nullptr, int num_scalars = 0);
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op, const char* arg);

// Functional form: allocates the output.
// `promoting_scalars` are Scalar arguments that join type promotion as Python numbers
// (pow's exponent, clamp's bounds); null entries (a None `Scalar?`) are skipped.
PointwiseCall prepare(const PointwiseSpec& spec, std::initializer_list<const TensorBase*> inputs,
                      std::initializer_list<const Scalar*> promoting_scalars = {});
// In-place form: `self` is the output; checks the result can be cast to it and that
// broadcasting does not grow it.
PointwiseCall prepare_inplace(const PointwiseSpec& spec, TensorBase& self,
                              std::initializer_list<const TensorBase*> inputs,
                              std::initializer_list<const Scalar*> promoting_scalars = {});
// out= form: resizes `out` when its shape differs (as PyTorch, when it is empty or matches) and
// computes into a temporary when its dtype differs from the result dtype.
PointwiseCall prepare_out(const PointwiseSpec& spec, TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                          std::initializer_list<const Scalar*> promoting_scalars = {});
// After the kernel ran: copies a temporary into the user's out= / in-place tensor, bumps versions.
void finish(PointwiseCall& call, TensorBase& destination);

// `str` argument to index: "tanh" in {"none","tanh"} -> 1; errors name the op and argument.
int64_t choice_index(const char* op, const char* arg, std::string_view value,
                     std::initializer_list<const char*> choices);

}  // namespace pointwise
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_POINTWISE_H_
