// Backward helpers of reductions (see kiln/autograd/formulas.h). Only differentiable ops
// touch gradient values, so each helper can itself be differentiated.
#include <algorithm>
#include <cmath>
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/isnan.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/logical_not.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/mean.h"
#include "kiln/gen/api/min.h"
#include "kiln/gen/api/pow.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/sgn.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/where.h"

namespace kiln {

namespace {

// The dims a reduction removed, wrapped and ascending; None or empty means all of them.
DimVector reduced_dims(IntArrayRef dims, bool all, int64_t ndim, const char* op) {
  DimVector out;
  if (ndim == 0) return out;
  if (all || dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  std::sort(out.begin(), out.end());
  out.resize(size_t(std::unique(out.begin(), out.end()) - out.begin()));
  return out;
}

DimVector reduced_dims(const OptIntList& dims, int64_t ndim, const char* op) {
  return reduced_dims(dims ? *dims : IntArrayRef(), !dims, ndim, op);
}

// Puts back the size-1 dims a keepdim=false reduction dropped, so the result broadcasts
// against the input.
Tensor restore_reduced(const Tensor& t, IntArrayRef dims, bool keepdim) {
  if (keepdim) return t;
  Tensor r = t;
  for (int64_t d : dims) r = r.unsqueeze(d);
  return r;
}

int64_t count_over(IntArrayRef sizes, IntArrayRef dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes[size_t(d)];
  return n;
}

// Inclusive running product along dim, forward (x0, x0x1, ...) or backward (..., x(n-2)x(n-1), x(n-1)).
// A log-step scan built from narrow, mul and cat: kiln has no cumprod, and this form stays
// differentiable.
Tensor running_prod(Tensor x, int64_t dim, bool reverse) {
  int64_t n = x.size(dim);
  for (int64_t shift = 1; shift < n; shift *= 2) {
    if (!reverse) {
      Tensor moved = x.narrow(dim, shift, n - shift) * x.narrow(dim, 0, n - shift);
      x = cat({x.narrow(dim, 0, shift), moved}, dim);
    } else {
      Tensor moved = x.narrow(dim, 0, n - shift) * x.narrow(dim, shift, n - shift);
      x = cat({moved, x.narrow(dim, n - shift, shift)}, dim);
    }
  }
  return x;
}

// For each element, the product of the other elements of its slice along dim, computed
// without dividing (exact when the slice has zeros); PyTorch's prod_safe_zeros_backward.
Tensor product_of_others(const Tensor& self, int64_t dim) {
  int64_t n = self.size(dim);
  DimVector ones_size(self.sizes());
  ones_size[size_t(dim)] = 1;
  Tensor one = ones(ones_size, self.options());
  Tensor before = cat({one, running_prod(self.narrow(dim, 0, n - 1), dim, false)}, dim);
  Tensor after = cat({running_prod(self.narrow(dim, 1, n - 1), dim, true), one}, dim);
  return before * after;
}

bool has_zero(const Tensor& self) { return any(self == 0).item<bool>(); }

}  // namespace

TensorBase sum_backward(const TensorBase& grad_in, IntArrayRef sizes, OptIntList dim, bool keepdim) {
  const Tensor grad(grad_in);
  DimVector dims = reduced_dims(dim, int64_t(sizes.size()), "sum_backward");
  return restore_reduced(grad, dims, keepdim).expand(sizes);
}

TensorBase mean_backward(const TensorBase& grad_in, IntArrayRef sizes, OptIntList dim, bool keepdim) {
  const Tensor grad(grad_in);
  DimVector dims = reduced_dims(dim, int64_t(sizes.size()), "mean_backward");
  int64_t n = count_over(sizes, dims);
  return restore_reduced(grad / double(n), dims, keepdim).expand(sizes);
}

TensorBase prod_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& result_in,
                         std::optional<int64_t> dim, bool keepdim) {
  const Tensor grad(grad_in);
  // the derivatives (products of the other factors) enter conjugated
  const Tensor self = conj(self_in);
  const Tensor result = conj(result_in);
  if (self.dim() == 0) return grad;
  if (!dim) {
    if (!has_zero(self)) return grad * (result / self);
    return (grad * product_of_others(self.reshape({-1}), 0)).reshape(self.sizes());
  }
  int64_t d = wrap_dim(*dim, self.dim(), "prod_backward");
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  if (!has_zero(self)) return g * ((keepdim ? result : result.unsqueeze(d)) / self);
  return g * product_of_others(self, d);
}

TensorBase amax_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& result_in,
                         IntArrayRef dim, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor result(result_in);
  DimVector dims = reduced_dims(dim, dim.empty(), self.dim(), "amax_backward");
  Tensor r = restore_reduced(result, dims, keepdim);
  // Every element equal to the extreme shares the gradient; a NaN result came from NaNs.
  Tensor mask = logical_or(self == r, logical_and(isnan(self), isnan(r)));
  Tensor count = sum(mask, dims.ref(), /*keepdim=*/true);
  return (restore_reduced(grad, dims, keepdim) / count) * mask;
}

TensorBase nansum_backward(const TensorBase& grad_in, const TensorBase& self_in, OptIntList dim, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  // NaNs were skipped: they get no gradient.
  return masked_fill(sum_backward(grad, self.sizes(), dim, keepdim), isnan(self), 0);
}

TensorBase nanmean_backward(const TensorBase& grad_in, const TensorBase& self_in, OptIntList dim, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  DimVector dims = reduced_dims(dim, self.dim(), "nanmean_backward");
  Tensor counted = logical_not(isnan(self));
  Tensor count = sum(counted, dims.ref(), /*keepdim=*/true);
  return masked_fill(restore_reduced(grad, dims, keepdim) / count, logical_not(counted), 0);
}

TensorBase aminmax_backward(const TensorBase& grad_min_in, const TensorBase& grad_max_in, const TensorBase& self_in,
                            const TensorBase& min_in, const TensorBase& max_in, std::optional<int64_t> dim,
                            bool keepdim) {
  const Tensor grad_min(grad_min_in);
  const Tensor grad_max(grad_max_in);
  const Tensor self(self_in);
  const Tensor min(min_in);
  const Tensor max(max_in);
  DimVector dims;  // none: every dim
  if (dim) dims.push_back(*dim);
  return amax_backward(grad_min, self, min, dims.ref(), keepdim) + amax_backward(grad_max, self, max, dims.ref(), keepdim);
}

TensorBase value_selecting_reduction_backward(const TensorBase& grad_in, int64_t dim, const TensorBase& indices_in,
                                              IntArrayRef sizes, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor indices(indices_in);
  int64_t ndim = int64_t(sizes.size());
  if (ndim == 0) return grad;
  int64_t d = wrap_dim(dim, ndim, "value_selecting_reduction_backward");
  Tensor g = keepdim ? grad : grad.unsqueeze(d);
  Tensor idx = keepdim ? indices : indices.unsqueeze(d);
  return scatter(zeros(sizes, g.options()), d, idx, g);
}

TensorBase var_backward(const TensorBase& grad_in, const TensorBase& self_in, OptIntList dim,
                        const std::optional<Scalar>& correction, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  DimVector dims = reduced_dims(dim, self.dim(), "var_backward");
  double dof = double(count_over(self.sizes(), dims)) - (correction ? correction->to_double() : 1.0);
  // dof <= 0 gives an infinite variance; PyTorch's gradient is then sgn(x - mean) * inf.
  double scale = dof > 0 ? 2.0 / dof : INFINITY;
  return (restore_reduced(grad, dims, keepdim) * scale) * (self - mean(self, dims.ref(), /*keepdim=*/true));
}

TensorBase norm_backward(const TensorBase& grad_in, const TensorBase& self_in, const std::optional<Scalar>& p_,
                         const TensorBase& result_in, OptIntList dim, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor result(result_in);
  double p = p_ ? p_->to_double() : 2.0;
  DimVector dims = reduced_dims(dim, self.dim(), "norm_backward");
  Tensor g = restore_reduced(grad, dims, keepdim);
  Tensor norm = restore_reduced(result, dims, keepdim);
  // A zero norm means a zero slice: dividing by 1 instead keeps those gradients 0 (no NaN).
  Tensor safe_norm = masked_fill(norm, norm == 0, 1);
  if (p == 0.0) return zeros_like(self);
  if (p == 1.0) return sgn(self) * g;
  if (p == 2.0) return g * (self / safe_norm);
  if (std::isinf(p)) {
    Tensor mag = abs(self);
    Tensor mask = logical_or(mag == norm, isnan(mag));
    Tensor count = sum(mask, dims.ref(), /*keepdim=*/true);
    return sgn(self) * ((g / count) * mask);
  }
  Tensor mag = abs(self);
  if (p < 1.0) {
    // |x|^(p-1) is infinite at 0; PyTorch defines those entries' gradient as 0.
    Tensor zero = self == 0;
    Tensor scaled = sgn(self) * masked_fill(pow(masked_fill(mag, zero, 1), p - 1), zero, 0);
    return scaled * g * pow(norm, 1 - p);
  }
  Tensor scaled = p < 2.0 ? sgn(self) * pow(mag, p - 1) : self * pow(mag, p - 2);
  return scaled * (g / pow(safe_norm, p - 1));
}

TensorBase logsumexp_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& result_in,
                              IntArrayRef dim, bool keepdim) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor result(result_in);
  DimVector dims = reduced_dims(dim, dim.empty(), self.dim(), "logsumexp_backward");
  return restore_reduced(grad, dims, keepdim) * exp(self - restore_reduced(result, dims, keepdim));
}

}  // namespace kiln
