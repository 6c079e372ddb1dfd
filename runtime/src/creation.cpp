// Factory functions: empty and its fills, ranges, identity, scalars and host buffers.
#include <cmath>
#include <cstring>
#include "core/allocator_registry.h"
#include "kiln/common/convert.h"
#include "core/pooled.h"
#include "kiln/tensor.h"
#include "core/element_types.h"

namespace kiln {
namespace {

// Bytes of a dense tensor of `sizes`; checks sizes are non-negative and the product fits.
size_t dense_nbytes(IntArrayRef sizes, DType dtype, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, ValueError, op, "size", "negative dimension ", s, " in ", shape_str(sizes));
    KILN_CHECK(!__builtin_mul_overflow(n, s, &n), ValueError, op, "size", "too many elements in ", shape_str(sizes));
  }
  int64_t bytes;
  KILN_CHECK(!__builtin_mul_overflow(n, int64_t(element_size(dtype)), &bytes), ValueError, op, "size",
             "too many bytes for ", shape_str(sizes));
  return size_t(bytes);
}

// requires_grad is left to the caller, which sets it after filling (see with_grad).
Tensor make_tensor(size_t nbytes, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& opts) {
  return Tensor(detail::new_tensor_impl(detail::new_storage(nbytes, opts.device), opts.dtype, sizes, strides, 0));
}

// A factory's result becomes a leaf that requires grad only once its values are written.
Tensor with_grad(Tensor t, const TensorOptions& opts) {
  if (KILN_UNLIKELY(opts.requires_grad)) t.requires_grad_(true);
  return t;
}

Tensor empty_for(IntArrayRef sizes, const TensorOptions& opts, const char* op) {
  size_t nbytes = dense_nbytes(sizes, opts.dtype, op);
  if (KILN_UNLIKELY(!opts.device.is_cpu())) detail::allocator_for_op(opts.device, op);
  return make_tensor(nbytes, sizes, contiguous_strides(sizes), opts);
}

// Factories that compute their values element by element (arange, linspace, eye) write them into
// a CPU tensor; host_options/to_requested move the result to the requested device afterwards,
// after checking up front that the device can be used (so the error names the factory).
TensorOptions host_options(const TensorOptions& opts, const char* op) {
  if (KILN_UNLIKELY(!opts.device.is_cpu())) detail::allocator_for_op(opts.device, op);
  return TensorOptions(opts.dtype);
}
Tensor to_requested(const Tensor& host, const TensorOptions& opts) {
  return opts.device.is_cpu() ? host : host.to(opts.device);
}

// What a Python number's kind creates in torch.full / torch.tensor.
DType inferred_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return DType::Bool;
    case Scalar::Kind::Int: return DType::Int64;
    case Scalar::Kind::Float: return default_float_dtype();
    case Scalar::Kind::Complex: break;
  }
  return to_complex(default_float_dtype());
}

// Writes one element of a freshly made CPU tensor without the generality of fill_.
void set_first(const Tensor& t, const Scalar& s) {
  visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    *static_cast<T*>(t.data_ptr()) = s.to<T>();
  });
}

}  // namespace

// ---- empty and fills ----

Tensor empty(IntArrayRef sizes, TensorOptions opts) { return with_grad(empty_for(sizes, opts, "empty"), opts); }

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts) {
  const char* op = "empty_strided";
  KILN_CHECK(sizes.size() == strides.size(), ShapeError, op, "stride", "got ", strides.size(), " strides for ",
             sizes.size(), " sizes");
  // elements spanned: 1 + sum((size - 1) * stride), or none when any size is 0
  int64_t span = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK(sizes[i] >= 0, ValueError, op, "size", "negative dimension ", sizes[i], " in ", shape_str(sizes));
    KILN_CHECK(strides[i] >= 0, ValueError, op, "stride", "negative stride ", strides[i], " in ",
               shape_str(strides));
    if (sizes[i] == 0) span = 0;
  }
  if (span) {
    for (size_t i = 0; i < sizes.size(); ++i) span += (sizes[i] - 1) * strides[i];
  }
  size_t nbytes = dense_nbytes({span}, opts.dtype, op);
  if (!opts.device.is_cpu()) detail::allocator_for_op(opts.device, op);
  return with_grad(make_tensor(nbytes, sizes, strides, opts), opts);
}

Tensor zeros(IntArrayRef sizes, TensorOptions opts) {
  Tensor t = empty_for(sizes, opts, "zeros");
  if (t.is_cpu()) {
    if (t.nbytes()) std::memset(t.data_ptr(), 0, t.nbytes());  // all-zero bits are 0 in every dtype
  } else {
    t.fill_(0);
  }
  return with_grad(t, opts);
}

Tensor ones(IntArrayRef sizes, TensorOptions opts) { return with_grad(empty_for(sizes, opts, "ones").fill_(1), opts); }

Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts) {
  return with_grad(empty_for(sizes, opts, "full").fill_(value), opts);
}

Tensor full(IntArrayRef sizes, const Scalar& value) {
  return full(sizes, value, TensorOptions(inferred_dtype(value)));
}

Tensor empty_like(const Tensor& t) { return empty_like(t, t.options()); }
// *_like results are contiguous (PyTorch keeps a dense input's strides): kernels may write them linearly.
Tensor empty_like(const Tensor& t, TensorOptions opts) {
  return with_grad(empty_for(t.sizes(), opts, "empty_like"), opts);
}
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
Tensor zeros_like(const Tensor& t, TensorOptions opts) { return zeros(t.sizes(), opts); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }
Tensor ones_like(const Tensor& t, TensorOptions opts) { return ones(t.sizes(), opts); }
Tensor full_like(const Tensor& t, const Scalar& value) { return full(t.sizes(), value, t.options()); }
Tensor full_like(const Tensor& t, const Scalar& value, TensorOptions opts) { return full(t.sizes(), value, opts); }

// ---- ranges ----

Tensor arange(const Scalar& end) { return arange(0, end, 1); }
Tensor arange(const Scalar& end, TensorOptions opts) { return arange(0, end, 1, opts); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step) {
  // torch.arange: floating if any bound or the step is floating, else int64
  bool floating = start.is_floating() || end.is_floating() || step.is_floating();
  return arange(start, end, step, TensorOptions(floating ? default_float_dtype() : DType::Int64));
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions opts) {
  const char* op = "arange";
  KILN_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(), ValueError, op, "start",
             "complex ranges are not supported");
  KILN_CHECK(opts.dtype != DType::Bool && !is_complex(opts.dtype), DTypeError, op, "dtype",
             "arange makes integral or floating tensors, not ", dtype_name(opts.dtype));
  bool integral = is_integral(opts.dtype, false);
  // PyTorch converts the bounds to the accumulate type first: int64 for integral dtypes,
  // so a step of 0.5 becomes 0 for an integer range.
  double xs, xe, xst;
  if (integral) {
    xs = double(start.to_int()), xe = double(end.to_int()), xst = double(step.to_int());
  } else {
    xs = start.to_double(), xe = end.to_double(), xst = step.to_double();
  }
  KILN_CHECK(std::isfinite(xs) && std::isfinite(xe), ValueError, op, "end", "unsupported range: ", start.str(),
             " -> ", end.str());
  KILN_CHECK(xst != 0, ValueError, op, "step", "step must be nonzero");
  KILN_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), ValueError, op, "step",
             "upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (opts.dtype == DType::Int64) {
    int64_t s = start.to_int(), e = end.to_int(), st = step.to_int(), sgn = (st > 0) - (st < 0);
    size_d = double((e - s + st - sgn) / st);
  } else {
    size_d = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  }
  KILN_CHECK(size_d >= 0 && size_d <= double(INT64_MAX), ValueError, op, "end",
             "invalid size, possible overflow? (start ", start.str(), ", end ", end.str(), ", step ", step.str(), ")");
  int64_t n = int64_t(size_d);
  Tensor t = empty_for({n}, host_options(opts, op), op);
  visit_dtype(opts.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(t.data_ptr());
    if constexpr (std::is_integral_v<T>) {
      int64_t s = start.to_int(), st = step.to_int();
      for (int64_t i = 0; i < n; ++i) p[i] = T(s + i * st);
    } else if constexpr (!is_complex_v<T>) {
      using Acc = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, float>, double, float>;
      Acc s = Acc(xs), st = Acc(xst);
      for (int64_t i = 0; i < n; ++i) p[i] = T(s + st * Acc(i));
    }
  });
  return with_grad(to_requested(t, opts), opts);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions opts) {
  const char* op = "linspace";
  KILN_CHECK(steps >= 0, ValueError, op, "steps", "number of steps must be non-negative, got ", steps);
  KILN_CHECK(opts.dtype != DType::Bool, DTypeError, op, "dtype", "linspace does not make bool tensors");
  Tensor t = empty_for({steps}, host_options(opts, op), op);
  if (steps == 1) {
    set_first(t, start);
  } else if (steps > 1) {
    // as ATen: the first half counts up from start, the second down from end, so both ends are exact
    visit_dtype(opts.dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool>) {
        using C = std::conditional_t<std::is_integral_v<T>, double, opmath_t<T>>;  // step type
        using M = opmath_t<T>;
        M s = start.to<M>(), e = end.to<M>();
        C step = (C(e) - C(s)) / C(double(steps - 1));
        int64_t halfway = steps / 2;
        T* p = static_cast<T*>(t.data_ptr());
        for (int64_t i = 0; i < steps; ++i) {
          C v = i < halfway ? C(s) + step * C(double(i)) : C(e) - step * C(double(steps - i - 1));
          p[i] = detail::convert<T>(v);
        }
      }
    });
  }
  return with_grad(to_requested(t, opts), opts);
}

Tensor eye(int64_t n, TensorOptions opts) { return eye(n, n, opts); }

Tensor eye(int64_t n, int64_t m, TensorOptions opts) {
  KILN_CHECK(n >= 0, ValueError, "eye", "n", "n must be greater or equal to 0, got ", n);
  KILN_CHECK(m >= 0, ValueError, "eye", "m", "m must be greater or equal to 0, got ", m);
  Tensor t = zeros({n, m}, host_options(opts, "eye"));
  int64_t k = n < m ? n : m;
  visit_dtype(opts.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < k; ++i) p[i * m + i] = T(1);
  });
  return with_grad(to_requested(t, opts), opts);
}

// ---- scalars and host data ----

Tensor scalar_tensor(const Scalar& s, TensorOptions opts) {
  Tensor t = empty_for({}, opts, "scalar_tensor");
  if (t.is_cpu()) set_first(t, s);
  else t.fill_(s);
  return with_grad(t, opts);
}

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t = make_tensor(element_size(s.dtype()), {}, {}, TensorOptions(s.dtype()));
  set_first(t, s);
  t.impl()->is_wrapped_number = true;
  return t;
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes, TensorOptions opts) {
  const char* op = "from_vector";
  int64_t n = numel_of(sizes);
  KILN_CHECK(n == int64_t(values.size()), ShapeError, op, "sizes", "shape ", shape_str(sizes), " has ", n,
             " elements but ", values.size(), " values were given");
  TensorOptions host(dtype_of<T>);
  Tensor t = empty_for(sizes, host, op);
  T* p = static_cast<T*>(t.data_ptr());
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];  // vector<bool> has no data()
  } else if (n) {
    std::memcpy(p, values.data(), values.size() * sizeof(T));
  }
  if (opts.dtype != t.dtype() || opts.device != t.device()) {
    Tensor out = empty_for(sizes, opts, op);
    out.copy_(t);
    t = out;
  }
  return with_grad(t, opts);
}

Tensor from_blob_copy(const void* data, IntArrayRef sizes, DType dtype, Device device) {
  Tensor t = empty_for(sizes, TensorOptions(dtype), "from_blob_copy");
  if (t.nbytes()) {
    KILN_CHECK(data != nullptr, ValueError, "from_blob_copy", "data", "null pointer for ", t.nbytes(), " bytes");
    std::memcpy(t.data_ptr(), data, t.nbytes());
  }
  return device.is_cpu() ? t : t.to(device);
}

#define KILN_INSTANTIATE(T) template Tensor from_vector<T>(const std::vector<T>&, IntArrayRef, TensorOptions);
KILN_FOR_EACH_ELEMENT_TYPE(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln
