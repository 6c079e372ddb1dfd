// Preparation of a pointwise call: checks, dtype plan, casting and broadcasting of the inputs,
// and the destination (new tensor, the in-place self, or an out= tensor).
#include <algorithm>
#include "kiln/destination.h"
#include "kiln/pointwise.h"
#include "kiln/strided_views.h"

namespace kiln::pointwise {

namespace {

const char* arg_name(const PointwiseSpec& spec, int i) { return spec.arg_names ? spec.arg_names[i] : "input"; }

// What the inputs decide: broadcast shape, device, dtype to compute in and dtype of the result.
struct Plan {
  DimVector shape;
  Device device;
  DType compute = DType::Float32, out = DType::Float32;
};

// A CPU 0-d tensor may join an op on another device, as in PyTorch (it is a number in effect).
bool is_cpu_scalar(const TensorBase& t) { return t.is_cpu() && t.dim() == 0; }

Device common_device(const PointwiseSpec& spec, const TensorBase* const* in, int n) {
  int first = 0;
  for (int i = 0; i < n; ++i)
    if (!is_cpu_scalar(*in[i])) { first = i; break; }
  Device device = in[first]->device();
  for (int i = 0; i < n; ++i) {
    if (in[i]->device() == device || is_cpu_scalar(*in[i])) continue;
    KILN_FAIL(DeviceError, spec.op, arg_name(spec, i), "expected all tensors on one device, but '",
              arg_name(spec, first), "' is on ", device.str(), " and '", arg_name(spec, i), "' is on ",
              in[i]->device().str());
  }
  return device;
}

Plan make_plan(const PointwiseSpec& spec, const TensorBase* const* in, int n, const Scalar* const* scalars, int ns) {
  KILN_CHECK(n == spec.num_inputs && n <= kMaxPointwiseInputs, InternalError, spec.op, "",
             "the stub passed ", n, " tensors, the op has ", int(spec.num_inputs));
  KILN_CHECK(ns <= kMaxPointwiseScalars, InternalError, spec.op, "", "too many promoting scalars: ", ns);
  for (int i = 0; i < n; ++i)
    KILN_CHECK(in[i] && in[i]->defined(), ValueError, spec.op, arg_name(spec, i), "expected a tensor, got an undefined one");
  Plan p;
  p.device = common_device(spec, in, n);

  // bool-only inputs (where's condition) take no part in promotion
  const TensorBase* promoted[kMaxPointwiseInputs];
  int np = 0;
  for (int i = 0; i < n; ++i) {
    if (spec.bool_input_mask & (1u << i)) {
      KILN_CHECK(in[i]->dtype() == DType::Bool, DTypeError, spec.op, arg_name(spec, i), "expected a bool tensor, got ",
                 dtype_name(in[i]->dtype()));
    } else {
      promoted[np++] = in[i];
    }
  }
  switch (spec.promotion) {
    case Promotion::Default:
      p.compute = p.out = result_type(promoted, np, scalars, ns);
      break;
    case Promotion::IntToFloat: {
      DType t = result_type(promoted, np, scalars, ns);
      p.compute = p.out = is_integral(t, /*include_bool=*/true) ? default_float_dtype() : t;
      break;
    }
    case Promotion::BoolResult:
      p.compute = result_type(promoted, np, scalars, ns);
      p.out = DType::Bool;
      break;
    case Promotion::ComplexToReal:
      p.compute = result_type(promoted, np, scalars, ns);
      p.out = to_real(p.compute);
      break;
    case Promotion::SelfDType:
      p.compute = p.out = in[0]->dtype();
      break;
  }

  p.shape = DimVector(in[0]->sizes());
  for (int i = 1; i < n; ++i)
    if (!in[i]->sizes().equals(p.shape)) p.shape = broadcast_shapes(p.shape, in[i]->sizes(), spec.op, arg_name(spec, i));
  return p;
}

// tensor.to(dtype, device) without autograd: the same tensor when nothing changes.
TensorBase cast(const TensorBase& t, DType dtype, Device device) {
  if (t.dtype() == dtype && t.device() == device) return t;
  TensorBase r = detail::empty_dense(t.sizes(), dtype, device);
  r.copy_(t);
  return r;
}

// True when an integer (or bool) tensor holds a zero: every byte of that element is zero.
template <typename Bits>
bool has_zero_bits(const Bits* data, int64_t n) {
  constexpr int64_t kChunk = 4096;  // no early exit inside a chunk, so the loop vectorizes
  for (int64_t start = 0; start < n; start += kChunk) {
    bool zero = false;
    for (int64_t i = start, end = std::min(n, start + kChunk); i < end; ++i) zero |= data[i] == 0;
    if (zero) return true;
  }
  return false;
}

bool has_zero(const TensorBase& t) {
  TensorBase dense = t.contiguous();
  const void* data = dense.data_ptr();
  switch (dense.element_size()) {
    case 1:
      return has_zero_bits(static_cast<const uint8_t*>(data), dense.numel());
    case 2:
      return has_zero_bits(static_cast<const uint16_t*>(data), dense.numel());
    case 4:
      return has_zero_bits(static_cast<const uint32_t*>(data), dense.numel());
    default:
      return has_zero_bits(static_cast<const uint64_t*>(data), dense.numel());
  }
}

// PyTorch's CPU errors for integer arithmetic with no integer answer. CUDA is not checked: a
// check would cost a device-to-host sync per call (the functors give 0 there; docs/architecture.md).
void check_integer_domain(const PointwiseSpec& spec, const Plan& p, const Scalar* const* scalars, int ns) {
  if (!p.device.is_cpu() || !is_integral(p.compute, /*include_bool=*/true)) return;
  if (spec.integer_exponent >= 0 && spec.integer_exponent < ns) {
    const Scalar* e = scalars[spec.integer_exponent];
    KILN_CHECK(!e || !(e->is_integral() && e->to_int() < 0), ValueError, spec.op, "exponent",
               "Integers to negative integer powers are not allowed.");
  }
}

PointwiseCall make_call(const PointwiseSpec& spec, const Plan& p, const TensorBase* const* in, int n) {
  PointwiseCall call;
  call.spec = &spec;
  call.num_inputs = int8_t(n);
  call.compute_dtype = p.compute;
  for (int i = 0; i < n; ++i) {
    // cast before expanding, so a broadcast operand is converted once, not per output element;
    // an input that needs neither is borrowed
    const bool is_bool_input = spec.bool_input_mask & (1u << i);
    const DType want = is_bool_input ? DType::Bool : p.compute;
    const bool as_is = in[i]->dtype() == want && in[i]->device() == p.device;
    TensorBase converted;
    if (!as_is) converted = cast(*in[i], want, p.device);
    const TensorBase& t = as_is ? *in[i] : converted;
    // after the cast, which can make a zero (uint8 // 256), before anything is written
    if (i == spec.integer_divisor && t.is_cpu() && is_integral(p.compute, /*include_bool=*/true))
      KILN_CHECK(!has_zero(t), ValueError, spec.op, arg_name(spec, i), "integer division by zero (ZeroDivisionError)");
    if (!t.sizes().equals(p.shape)) call.hold_input(i, views::expanded(t, p.shape));
    else if (as_is) call.borrow_input(i, *in[i]);
    else call.hold_input(i, std::move(converted));
  }
  return call;
}

// Byte range [lo, hi) a tensor's elements occupy.
std::pair<const char*, const char*> byte_range(const TensorBase& t) {
  int64_t lo = 0, hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t span = (t.size(d) - 1) * t.stride(d);
    (span < 0 ? lo : hi) += span;
  }
  const char* base = static_cast<const char*>(t.data_ptr());
  int64_t es = int64_t(t.element_size());
  return {base + lo * es, base + (hi + 1) * es};
}

// Writing `dst` element by element while reading `src` is safe when they are the same elements in
// the same order or do not share memory; anything else (a.add_(a.t())) must go through a temporary.
bool overlaps_harmfully(const TensorBase& dst, const TensorBase& src) {
  if (dst.numel() == 0 || src.numel() == 0) return false;
  if (dst.storage().get() != src.storage().get()) return false;
  if (dst.data_ptr() == src.data_ptr() && dst.strides().equals(src.strides()) && dst.dtype() == src.dtype())
    return false;
  auto a = byte_range(dst), b = byte_range(src);
  return a.first < b.second && b.first < a.second;
}

bool any_harmful_overlap(const TensorBase& dst, const PointwiseCall& call) {
  for (int i = 0; i < call.num_inputs; ++i)
    if (overlaps_harmfully(dst, call.input(i))) return true;
  return false;
}

}  // namespace

PointwiseCall prepare(const PointwiseSpec& spec, std::initializer_list<const TensorBase*> inputs,
                      std::initializer_list<const Scalar*> promoting_scalars) {
  int n = int(inputs.size());
  Plan p = make_plan(spec, inputs.begin(), n, promoting_scalars.begin(), int(promoting_scalars.size()));
  check_integer_domain(spec, p, promoting_scalars.begin(), int(promoting_scalars.size()));
  PointwiseCall call = make_call(spec, p, inputs.begin(), n);
  call.out = detail::empty_dense(p.shape, p.out, p.device, spec.op);
  return call;
}

PointwiseCall prepare_inplace(const PointwiseSpec& spec, TensorBase& self,
                              std::initializer_list<const TensorBase*> inputs,
                              std::initializer_list<const Scalar*> promoting_scalars) {
  int n = int(inputs.size());
  Plan p = make_plan(spec, inputs.begin(), n, promoting_scalars.begin(), int(promoting_scalars.size()));
  check_integer_domain(spec, p, promoting_scalars.begin(), int(promoting_scalars.size()));
  support::check_destination(spec.op, "self", self, p.out, p.device);
  KILN_CHECK(self.sizes().equals(p.shape), ShapeError, spec.op, "self", "output with shape ", shape_str(self.sizes()),
             " doesn't match the broadcast shape ", shape_str(p.shape));
  support::check_no_internal_overlap(spec.op, "self", self);
  PointwiseCall call = make_call(spec, p, inputs.begin(), n);
  bool direct = self.dtype() == p.out && !any_harmful_overlap(self, call);
  call.out = direct ? self : detail::empty_dense(p.shape, p.out, p.device, spec.op);
  return call;
}

PointwiseCall prepare_out(const PointwiseSpec& spec, TensorBase& out, std::initializer_list<const TensorBase*> inputs,
                          std::initializer_list<const Scalar*> promoting_scalars) {
  int n = int(inputs.size());
  Plan p = make_plan(spec, inputs.begin(), n, promoting_scalars.begin(), int(promoting_scalars.size()));
  check_integer_domain(spec, p, promoting_scalars.begin(), int(promoting_scalars.size()));
  support::check_destination(spec.op, "out", out, p.out, p.device);
  // inputs are captured as views first, so resizing `out` cannot change what they read
  PointwiseCall call = make_call(spec, p, inputs.begin(), n);
  if (!out.sizes().equals(p.shape)) support::resize_out(out, p.shape);
  support::check_no_internal_overlap(spec.op, "out", out);
  bool direct = out.dtype() == p.out && !any_harmful_overlap(out, call);
  call.out = direct ? out : detail::empty_dense(p.shape, p.out, p.device, spec.op);
  return call;
}

void finish(PointwiseCall& call, TensorBase& destination) {
  if (!call.out.is_same(destination)) destination.copy_(call.out);
  destination.bump_version();
}

}  // namespace kiln::pointwise
