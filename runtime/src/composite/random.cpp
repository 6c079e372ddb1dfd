// The random ops of ops/random.yaml: creation (rand, randn, randint, randperm, bernoulli,
// normal, *_like) and in-place fills (uniform_, normal_): argument checks, dtype dispatch,
// devices and autograd around the backends' fills. Uniform, normal, randint and bernoulli draws
// and randperm's sorted keys run on a device's tensors in place through its backend's hooks
// (kiln/device_hooks.h), from the same Philox blocks on every device (kernels/cpu/random.cpp,
// kernels/cuda/random.cu, kernels/cuda/randperm.cu).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include "kiln/autograd.h"
#include "kiln/cuda.h"
#include "kiln/op_support.h"
#include "kiln/gen/composite.h"
#include "kiln/random.h"
#include "kiln/device_hooks.h"
#include "factory_options.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/amax.h"
#include "kiln/gen/api/amin.h"
#include "kiln/gen/api/bernoulli.h"
#include "kiln/gen/api/ge.h"
#include "kiln/gen/api/le.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/normal.h"
#include "kiln/gen/api/normal_.h"
#include "kiln/gen/api/uniform_.h"

namespace kiln::composite {
namespace {

Generator& resolve(Generator* gen) { return gen ? *gen : default_generator(); }

void check_inexact(const char* op, const char* arg, DType dtype) {
  KILN_CHECK(is_inexact(dtype), DTypeError, op, arg, "expected a floating point or complex dtype, got ",
             dtype_name(dtype));
}

// Largest finite value of a floating dtype (of its real type for complex).
double max_finite(DType dtype) {
  switch (to_real(dtype)) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return double(FLT_MAX);
    default: return DBL_MAX;
  }
}

// Range of integers `dtype` holds exactly: its limits, or +-2^digits for floating types.
void check_holds(const char* op, DType dtype, int64_t lo, int64_t hi) {
  KILN_CHECK(!is_complex(dtype), DTypeError, op, "dtype", "expected a real dtype, got ", dtype_name(dtype));
  int64_t min = 0, max = 0;
  switch (dtype) {
    case DType::Bool: max = 1; break;
    case DType::UInt8: max = 255; break;
    case DType::Int8: min = -128, max = 127; break;
    case DType::Int16: min = INT16_MIN, max = INT16_MAX; break;
    case DType::Int32: min = INT32_MIN, max = INT32_MAX; break;
    case DType::Int64: min = INT64_MIN, max = INT64_MAX; break;
    case DType::Float16: min = -(int64_t(1) << 11), max = int64_t(1) << 11; break;
    case DType::BFloat16: min = -(int64_t(1) << 8), max = int64_t(1) << 8; break;
    case DType::Float32: min = -(int64_t(1) << 24), max = int64_t(1) << 24; break;
    default: min = -(int64_t(1) << 53), max = int64_t(1) << 53; break;
  }
  KILN_CHECK(lo >= min && hi <= max, ValueError, op, "dtype", "values in [", lo, ", ", hi, "] do not fit ",
             dtype_name(dtype), " exactly (it holds [", min, ", ", max, "])");
}

// Fills a contiguous CPU or CUDA tensor; complex tensors as 2n reals (normal: std / sqrt(2) per
// part, so |z - mean| has variance std^2, and `mean` on both parts, as PyTorch).
void uniform_contiguous(Tensor& t, double from, double to, Generator& gen) {
  device_hooks(t.device().type, "uniform_").uniform_fill(t, from, to, gen);
}
void normal_contiguous(Tensor& t, double mean, double std, Generator& gen) {
  device_hooks(t.device().type, "normal_").normal_fill(t, mean, std, gen);
}

// A new tensor filled by `fill`, on the requested device when the fill runs there, else filled
// on the CPU and moved. (The generated entry point applies requires_grad.)
template <typename Fill>
Tensor create(IntArrayRef sizes, const TensorOptions& opts, const Fill& fill, bool fills_any_device = false) {
  Tensor out = kiln::empty(sizes, TensorOptions(opts.dtype, fills_any_device ? opts.device : kCPU));
  fill(out);
  if (out.device() != opts.device) out = out.to(opts.device);
  return out;
}

// The values no longer depend on the overwritten ones: their gradient is zero (PyTorch's
// derivative of uniform_ and normal_).
struct RandomFillBackward final : Node {
  explicit RandomFillBackward(const char* name) : name_(name) {}
  const char* name() const override { return name_; }
  TensorBaseList apply(TensorBaseList&& grads) override {
    TensorBaseList out(next_edges.size());
    if (!grads.empty() && grads[0].defined() && !out.empty()) out[0] = kiln::zeros_like(Tensor(grads[0]));
    return out;
  }
  const char* name_;
};

// In-place fill in logical order: directly when self is contiguous (and on the CPU, unless the
// fill runs on any device), else through a contiguous temporary on self's device (or the CPU).
template <typename Fill>
Tensor& fill_inplace(Tensor& self, const char* op, const char* node_name, const Fill& fill,
                     bool fills_any_device = false) {
  const bool record = autograd::any_requires_grad({&self});
  Ref<RandomFillBackward> node;
  if (record) {
    support::check_inplace(self, op);
    node = make_ref<RandomFillBackward>(node_name);
    node->next_edges.push_back(autograd::gradient_edge(self));
  }
  if (self.numel() > 0) {
    if (self.is_contiguous() && (self.is_cpu() || fills_any_device)) {
      fill(self);
      self.bump_version();
    } else {
      Tensor tmp = kiln::empty(self.sizes(), TensorOptions(self.dtype(), fills_any_device ? self.device() : kCPU));
      fill(tmp);
      NoGradGuard no_grad;
      self.copy_(tmp);
    }
  }
  if (record) autograd::set_history(self, node);
  return self;
}

// Integers uniform on [low, low + range) into a contiguous CPU or CUDA tensor of a real dtype.
void randint_contiguous(Tensor& t, int64_t low, uint64_t range, Generator& gen) {
  device_hooks(t.device().type, "randint").randint_fill(t, low, range, gen);
}

// Every probability in [0, 1] (NaN is not). A CUDA tensor is checked on the device (one flag
// read back); inside a graph capture nothing can be read back, and a bad p draws NaN instead.
void check_probabilities(const Tensor& p) {
  if (p.numel() == 0) return;
  if (p.is_cuda()) {
    if (cuda::capture_status(cuda::current_stream(p.device().index)) != cuda::CaptureStatus::None) return;
    NoGradGuard no_grad;
    Tensor in_range = logical_and(ge(p, Scalar(0.0)), le(p, Scalar(1.0)));
    KILN_CHECK(all(in_range).item().to_int() != 0, ValueError, "bernoulli", "self",
               "expected all probabilities in [0, 1], got ", amin(p, {}).item().to_double(), " to ",
               amax(p, {}).item().to_double());
    return;
  }
  for (double v : p.to_vector<double>())
    KILN_CHECK(v >= 0 && v <= 1, ValueError, "bernoulli", "self", "expected all probabilities in [0, 1], got ", v);
}

void check_uniform_bounds(DType dtype, double from, double to) {
  KILN_CHECK(from <= to, ValueError, "uniform_", "from", "expected a [from, to) range, but found from=", from,
             " > to=", to);
  const double limit = max_finite(dtype);
  KILN_CHECK(from >= -limit && to <= limit && to - from <= limit, ValueError, "uniform_", "to",
             "from, to and to - from must be finite in ", dtype_name(dtype), " (|x| <= ", limit, "), got from=",
             from, ", to=", to);
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, Generator* gen) {
  KILN_CHECK(self.defined(), ValueError, "uniform_", "self", "undefined tensor");
  check_inexact("uniform_", "self", self.dtype());
  check_uniform_bounds(self.dtype(), from, to);
  Generator& g = resolve(gen);
  return fill_inplace(
      self, "uniform_", "UniformBackward", [&](Tensor& t) { uniform_contiguous(t, from, to, g); }, true);
}

Tensor& normal_(Tensor& self, double mean, double std, Generator* gen) {
  KILN_CHECK(self.defined(), ValueError, "normal_", "self", "undefined tensor");
  check_inexact("normal_", "self", self.dtype());
  KILN_CHECK(std >= 0, ValueError, "normal_", "std", "expected std >= 0.0, got ", std);
  Generator& g = resolve(gen);
  return fill_inplace(
      self, "normal_", "NormalBackward", [&](Tensor& t) { normal_contiguous(t, mean, std, g); }, true);
}

// Named after the random op, not the empty() it calls.
static void check_sizes(const char* op, IntArrayRef sizes) {
  for (int64_t s : sizes)
    KILN_CHECK(s >= 0, ValueError, op, "size", "negative dimension ", s, " in ", shape_str(sizes));
}

Tensor rand(IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  check_sizes("rand", sizes);
  check_inexact("rand", "dtype", opts.dtype);
  Generator& g = resolve(gen);
  return create(sizes, opts, [&](Tensor& t) { uniform_contiguous(t, 0, 1, g); }, true);
}

Tensor randn(IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  check_sizes("randn", sizes);
  check_inexact("randn", "dtype", opts.dtype);
  Generator& g = resolve(gen);
  return create(sizes, opts, [&](Tensor& t) { normal_contiguous(t, 0, 1, g); }, true);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  if (!opts.dtype_given) opts.dtype = DType::Int64;  // torch.randint's default
  check_sizes("randint", sizes);
  KILN_CHECK(low < high, ValueError, "randint", "high", "expected low < high, got low=", low, ", high=", high);
  check_holds("randint", opts.dtype, low, high - 1);
  const uint64_t range = uint64_t(high) - uint64_t(low);  // exact in uint64 even for [INT64_MIN, INT64_MAX)
  Generator& g = resolve(gen);
  return create(sizes, opts, [&](Tensor& t) { randint_contiguous(t, low, range, g); }, true);
}

Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions opts, Generator* gen) {
  return composite::randint(0, high, sizes, opts, gen);
}

// Indices sorted by 64-bit random keys (PermKeyBlock), ties by index: the same permutation on
// every device.
Tensor randperm(int64_t n, TensorOptions opts, Generator* gen) {
  if (!opts.dtype_given) opts.dtype = DType::Int64;  // torch.randperm's default
  KILN_CHECK(n >= 0, ValueError, "randperm", "n", "expected n >= 0, got ", n);
  KILN_CHECK(opts.dtype != DType::Bool, DTypeError, "randperm", "dtype", "expected an integer or floating dtype, got bool");
  check_holds("randperm", opts.dtype, 0, n > 0 ? n - 1 : 0);
  Generator& g = resolve(gen);
  const int64_t size[] = {n};
  return create(
      IntArrayRef(size, 1), opts,
      [&](Tensor& t) {
        if (n > 0) device_hooks(t.device().type, "randperm").randperm_fill(t, g);
      },
      true);
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  KILN_CHECK(p.defined(), ValueError, "bernoulli", "self", "undefined tensor");
  KILN_CHECK(is_floating(p.dtype()), DTypeError, "bernoulli", "self", "expected a floating point dtype, got ",
             dtype_name(p.dtype()));
  check_probabilities(p);
  Generator& g = resolve(gen);
  Tensor probs = p.detach().contiguous();  // the draws are not differentiable
  Tensor out = kiln::empty(p.sizes(), TensorOptions(p.dtype(), p.device()));
  if (out.numel() == 0) return out;
  device_hooks(out.device().type, "bernoulli").bernoulli_fill(out, probs, g);
  return out;
}

// bernoulli.p: one probability for every element; the result has self's sizes, dtype and device.
Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  KILN_CHECK(p >= 0 && p <= 1, ValueError, "bernoulli", "p", "expected p in [0, 1], got ", p);
  KILN_CHECK(is_floating(self.dtype()), DTypeError, "bernoulli", "self", "expected a floating point dtype, got ",
             dtype_name(self.dtype()));
  NoGradGuard no_grad;  // the draws are not differentiable
  return composite::bernoulli(kiln::full_like(self, p, TensorOptions(), MemoryFormat::Contiguous), gen);
}

// *_like: self's sizes and, unless given, its dtype and device; the result is contiguous (its
// values are drawn in logical order either way).
Tensor rand_like(const Tensor& self, TensorOptions options, std::optional<MemoryFormat>) {
  return composite::rand(self.sizes(), options_like(self, options), nullptr);
}

Tensor randn_like(const Tensor& self, TensorOptions options, std::optional<MemoryFormat>) {
  return composite::randn(self.sizes(), options_like(self, options), nullptr);
}

// normal: standard normal draws scaled by std and shifted by mean (broadcast together), as
// PyTorch's output.normal_(0, 1).mul_(std).add_(mean); std must be non-negative.
namespace {

void check_std(const Tensor& std) {
  NoGradGuard no_grad;
  KILN_CHECK(std.numel() == 0 || kiln::all(kiln::ge(std, Scalar(0.0))).item().to_int() != 0, ValueError, "normal",
             "std", "normal expects all elements of std >= 0.0");
}
Tensor standard_normal(IntArrayRef sizes, DType dtype, Device device, Generator* gen) {
  Tensor z = kiln::empty(sizes, TensorOptions(dtype, device));
  return composite::normal_(z, 0, 1, gen);
}

}  // namespace

Tensor normal(const Tensor& mean, const Tensor& std, Generator* gen) {
  check_inexact("normal", "mean", mean.dtype());
  check_std(std);
  NoGradGuard no_grad;
  const DimVector sizes = pointwise::broadcast_shapes(mean.sizes(), std.sizes(), "normal", "std");
  Tensor z = standard_normal(sizes, promote_types(mean.dtype(), std.dtype()), mean.device(), gen);
  return kiln::add(kiln::mul(z, std), mean);
}

Tensor normal(const Tensor& mean, double std, Generator* gen) {
  check_inexact("normal", "mean", mean.dtype());
  KILN_CHECK(std >= 0, ValueError, "normal", "std", "normal expects std >= 0.0, but found std ", std);
  NoGradGuard no_grad;
  Tensor z = standard_normal(mean.sizes(), mean.dtype(), mean.device(), gen);
  return kiln::add(kiln::mul(z, Scalar(std)), mean);
}

Tensor normal(double mean, const Tensor& std, Generator* gen) {
  check_inexact("normal", "std", std.dtype());
  check_std(std);
  NoGradGuard no_grad;
  Tensor z = standard_normal(std.sizes(), std.dtype(), std.device(), gen);
  return kiln::add(kiln::mul(z, std), Scalar(mean));
}

Tensor normal(double mean, double std, IntArrayRef size, TensorOptions options, Generator* gen) {
  KILN_CHECK(std >= 0, ValueError, "normal", "std", "normal expects std >= 0.0, but found std ", std);
  check_inexact("normal", "dtype", options.dtype);
  Tensor z = kiln::empty(size, options);
  return composite::normal_(z, mean, std, gen);
}

}  // namespace kiln::composite
