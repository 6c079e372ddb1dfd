#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
// Helpers that ops/*.yaml derivative formulas call besides ops. Each is written only with
// differentiable kiln ops, so the gradient of a gradient (create_graph=true) works.
// Semantics follow PyTorch's torch/csrc/autograd/FunctionsManual.cpp.
#include <optional>
#include <vector>
#include "kiln/kiln.h"

namespace kiln {

// Reductions: spread `grad` (the reduced shape) back over the input of `sizes`.
// dim None or empty reduces every dim, as the forward ops do.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, OptIntList dim, bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, OptIntList dim, bool keepdim);
// dim nullopt: product of every element. Exact where `self` has zeros.
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<int64_t> dim,
                     bool keepdim);
// amax/amin/max/min: the gradient is split evenly among the elements equal to `result`.
Tensor amax_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
// nansum/nanmean: NaNs were skipped and get no gradient; nanmean divides by the count of the others.
Tensor nansum_backward(const Tensor& grad, const Tensor& self, OptIntList dim, bool keepdim);
Tensor nanmean_backward(const Tensor& grad, const Tensor& self, OptIntList dim, bool keepdim);
// aminmax: each result's gradient as amin's and amax's (split evenly among ties).
Tensor aminmax_backward(const Tensor& grad_min, const Tensor& grad_max, const Tensor& self, const Tensor& min,
                        const Tensor& max, std::optional<int64_t> dim, bool keepdim);
// max.dim/min.dim: the gradient goes to the element `indices` picked.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim);
Tensor var_backward(const Tensor& grad, const Tensor& self, OptIntList dim, const std::optional<Scalar>& correction,
                    bool keepdim);
Tensor norm_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& p, const Tensor& result,
                     OptIntList dim, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                          bool keepdim);

// Scans. cumprod's gradient is exact where self has zeros (each slice's first zero gets the
// product of the others; later elements get none). logcumsumexp's is computed in log space,
// as PyTorch's; `reverse` for _logcumsumexp_reverse.
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool reverse);

// nn.
Tensor softmax_backward_data(const Tensor& grad, const Tensor& result, int64_t dim);
Tensor log_softmax_backward_data(const Tensor& grad, const Tensor& result, int64_t dim);
// reduction: 0 none, 1 mean, 2 sum. `weight` undefined means no class weights.
Tensor nll_loss_backward(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                         int64_t reduction, int64_t ignore_index);

// Matrix products. mat2's gradient is computed in mat2's own layout: for weight.t() (linear)
// that makes the gradient reaching the weight contiguous, with no transposing copy.
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, const Scalar& alpha);
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha);
// grad * s, or grad itself when s is 1 (no pass over the data for the common default).
Tensor scale_grad(const Tensor& grad, const Scalar& s);

// Pointwise.
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max);
Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent);
Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result);

// Shape.
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
// One gradient per cat input; a legacy empty input of shape [0] gets an empty gradient.
TensorList cat_backward(const Tensor& grad, const std::vector<DimVector>& sizes, int64_t dim);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
