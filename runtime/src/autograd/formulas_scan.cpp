// Backward helpers of scans (see kiln/autograd/formulas.h). Written with differentiable ops
// only, so each can itself be differentiated.
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/_cumsum_reverse.h"
#include "kiln/gen/api/_logcumsumexp_reverse.h"
#include "kiln/gen/api/abs.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/cumprod.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/log.h"
#include "kiln/gen/api/logcumsumexp.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/logical_not.h"
#include "kiln/gen/api/masked_fill.h"

namespace kiln {

TensorBase cumprod_backward(const TensorBase& grad_in, const TensorBase& self_in, int64_t dim,
                            const TensorBase& result_in) {
  const Tensor grad(grad_in);
  // the derivatives (products of the other factors) enter conjugated
  const Tensor self = conj(self_in);
  const Tensor result = conj(result_in);
  if (self.dim() == 0 || self.numel() == 0) return grad;  // a 0-d cumprod is the identity
  const int64_t d = wrap_dim(dim, self.dim(), "cumprod_backward");
  // d result[j] / d self[k] = result[j] / self[k] for j >= k: a reverse running sum.
  Tensor is_zero = self == 0;
  if (!any(is_zero).item<bool>()) return _cumsum_reverse(grad * result, d) / self;
  // With zeros, per slice: before its first zero the same formula holds (result is 0 from
  // the zero on); the first zero z gets sum over j >= z of grad[j] times the product of
  // self[0..j] without self[z]; everything after it gets 0.
  Tensor zeros_so_far = cumsum(is_zero, d);
  Tensor before = zeros_so_far == 0;
  Tensor first_zero = logical_and(is_zero, zeros_so_far == 1);
  Tensor g_before = _cumsum_reverse(grad * result, d) / masked_fill(self, logical_not(before), 1);
  Tensor without_zero = cumprod(masked_fill(self, first_zero, 1), d);
  Tensor g_zero = _cumsum_reverse(masked_fill(grad * without_zero, before, 0), d);
  return masked_fill(g_before, logical_not(before), 0) + masked_fill(g_zero, logical_not(first_zero), 0);
}

TensorBase logcumsumexp_backward(const TensorBase& grad_in, const TensorBase& self_in, const TensorBase& result_in,
                                 int64_t dim, bool reverse) {
  const Tensor grad(grad_in);
  const Tensor self(self_in);
  const Tensor result(result_in);
  if (self.dim() == 0 || self.numel() == 0) return grad;  // a 0-d logcumsumexp is the identity
  // grad_self[k] = sum over j at or after k in scan order of grad[j] * exp(self[k] - result[j]),
  // summed in log space for the positive and the negative part of grad (PyTorch's approach).
  const double lowest = finfo(grad.dtype()).lowest;
  Tensor log_abs = log(abs(grad));
  Tensor log_pos = masked_fill(log_abs, grad <= 0, lowest);
  Tensor log_neg = masked_fill(log_abs, grad >= 0, lowest);
  auto sum_after = [&](const Tensor& x) { return reverse ? logcumsumexp(x, dim) : _logcumsumexp_reverse(x, dim); };
  return exp(sum_after(log_pos - result) + self) - exp(sum_after(log_neg - result) + self);
}

}  // namespace kiln
