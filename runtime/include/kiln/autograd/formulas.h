#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
// Helpers that ops/*.yaml derivative formulas call besides ops. Each is written only with
// differentiable kiln ops, so the gradient of a gradient (create_graph=true) works. Declared
// over TensorBase, so the generated entries that call them need no op's declaration.
// Semantics follow PyTorch's torch/csrc/autograd/FunctionsManual.cpp.
#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>
#include "kiln/tensor_base.h"

namespace kiln {

// `derivatives: not_implemented` (ops PyTorch gives no formula, e.g. scatter.reduce): backward
// through the op raises NotImplementedError naming it, instead of silently giving no gradient.
[[noreturn]] TensorBase derivative_not_implemented(const char* op);

// Reductions: spread `grad` (the reduced shape) back over the input of `sizes`.
// dim None or empty reduces every dim, as the forward ops do.
TensorBase sum_backward(const TensorBase& grad, IntArrayRef sizes, OptIntList dim, bool keepdim);
TensorBase mean_backward(const TensorBase& grad, IntArrayRef sizes, OptIntList dim, bool keepdim);
// dim nullopt: product of every element. Exact where `self` has zeros.
TensorBase prod_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& result,
                         std::optional<int64_t> dim, bool keepdim);
// amax/amin/max/min: the gradient is split evenly among the elements equal to `result`.
TensorBase amax_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& result, IntArrayRef dim,
                         bool keepdim);
// nansum/nanmean: NaNs were skipped and get no gradient; nanmean divides by the count of the others.
TensorBase nansum_backward(const TensorBase& grad, const TensorBase& self, OptIntList dim, bool keepdim);
TensorBase nanmean_backward(const TensorBase& grad, const TensorBase& self, OptIntList dim, bool keepdim);
// aminmax: each result's gradient as amin's and amax's (split evenly among ties).
TensorBase aminmax_backward(const TensorBase& grad_min, const TensorBase& grad_max, const TensorBase& self,
                            const TensorBase& min, const TensorBase& max, std::optional<int64_t> dim, bool keepdim);
// max.dim/min.dim: the gradient goes to the element `indices` picked.
TensorBase value_selecting_reduction_backward(const TensorBase& grad, int64_t dim, const TensorBase& indices,
                                              IntArrayRef sizes, bool keepdim);
// Indexing: each gradient moves values with the adjoint op (gather <-> scatter_add,
// index_select <-> index_add, take <-> put). `sizes`: the shape the gradient must have.
TensorBase gather_backward(const TensorBase& grad, IntArrayRef self_sizes, int64_t dim, const TensorBase& index);
// scatter's src: gather(grad, dim, index), zero-padded to src's shape where src is larger than index.
TensorBase gather_to(const TensorBase& grad, int64_t dim, const TensorBase& index, IntArrayRef src_sizes);
TensorBase index_select_backward(const TensorBase& grad, IntArrayRef self_sizes, int64_t dim, const TensorBase& index);
TensorBase index_select_to(const TensorBase& grad, int64_t dim, const TensorBase& index, IntArrayRef sizes);
TensorBase index_add_source_backward(const TensorBase& grad, int64_t dim, const TensorBase& index,
                                     IntArrayRef source_sizes, const Scalar& alpha);
// index_fill's 0-d value: the sum of the gradient over the filled places (each counted once).
TensorBase index_fill_value_backward(const TensorBase& grad, int64_t dim, const TensorBase& index);
TensorBase take_backward(const TensorBase& grad, IntArrayRef self_sizes, const TensorBase& index);
TensorBase take_to(const TensorBase& grad, const TensorBase& index, IntArrayRef sizes);
TensorBase put_self_backward(const TensorBase& grad, const TensorBase& index, bool accumulate);
// masked_select <-> masked_scatter: self's gradient is grad scattered back to the true places of
// mask (self and mask of one shape); masked_scatter's source gets grad's values at those places,
// in order, zero-padded to source's shape (source may hold more than mask's true places).
TensorBase masked_select_backward(const TensorBase& grad, IntArrayRef self_sizes, const TensorBase& mask);
TensorBase masked_scatter_source_backward(const TensorBase& grad, const TensorBase& mask, IntArrayRef source_sizes);
// as_strided: grad is added into a zeroed copy of the storage region both views reach (places
// the result repeats get the sum), and self reads its gradient from there; where self's own
// elements share places, each gets an equal share, as PyTorch's.
TensorBase as_strided_backward(const TensorBase& grad, const TensorBase& self, IntArrayRef size, IntArrayRef stride,
                               std::optional<int64_t> storage_offset);
// scatter_reduce (sum, mean, amax/amin split among ties, prod exact at zeros): self's and src's.
std::tuple<TensorBase, TensorBase> scatter_reduce_backward(const TensorBase& grad, const TensorBase& self, int64_t dim,
                                                           const TensorBase& index, const TensorBase& src,
                                                           std::string_view reduce, bool include_self,
                                                           const TensorBase& result,
                                                           std::array<bool, 2> grad_input_mask);
TensorBase var_backward(const TensorBase& grad, const TensorBase& self, OptIntList dim,
                        const std::optional<Scalar>& correction, bool keepdim);
TensorBase norm_backward(const TensorBase& grad, const TensorBase& self, const std::optional<Scalar>& p,
                         const TensorBase& result, OptIntList dim, bool keepdim);
TensorBase logsumexp_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& result, IntArrayRef dim,
                              bool keepdim);

// Scans. cumprod's gradient is exact where self has zeros (each slice's first zero gets the
// product of the others; later elements get none). logcumsumexp's is computed in log space,
// as PyTorch's; `reverse` for _logcumsumexp_reverse.
TensorBase cumprod_backward(const TensorBase& grad, const TensorBase& self, int64_t dim, const TensorBase& result);
TensorBase logcumsumexp_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& result, int64_t dim,
                                 bool reverse);

// nn.
TensorBase softmax_backward_data(const TensorBase& grad, const TensorBase& result, int64_t dim);
TensorBase log_softmax_backward_data(const TensorBase& grad, const TensorBase& result, int64_t dim);
// log_softmax's Jacobian applied to a tangent: t - sum(softmax * t) (its transpose is the backward).
TensorBase log_softmax_jvp(const TensorBase& tangent, const TensorBase& result, int64_t dim);
// native_layer_norm's input, weight and bias gradients: the fused kernel
// (native_layer_norm_backward) in a plain backward; under create_graph the same formulas from
// differentiable ops, with mean and rstd recomputed from input so the second derivative is exact.
std::tuple<TensorBase, TensorBase, TensorBase> layer_norm_backward(const TensorBase& grad, const TensorBase& input,
                                                                   IntArrayRef normalized_shape, const TensorBase& mean,
                                                                   const TensorBase& rstd, const TensorBase& weight,
                                                                   const TensorBase& bias, double eps,
                                                                   std::array<bool, 3> grad_input_mask);
// _batch_norm_training's input, weight and bias gradients, the same way: the fused kernel
// (_batch_norm_training_backward) in a plain backward, differentiable ops under create_graph.
std::tuple<TensorBase, TensorBase, TensorBase> batch_norm_training_backward(
    const TensorBase& grad, const TensorBase& input, const TensorBase& weight, const TensorBase& save_mean,
    const TensorBase& save_invstd, double eps, std::array<bool, 3> grad_input_mask);
// _group_norm_fused's input, weight and bias gradients, the same way: the fused kernel
// (_group_norm_fused_backward) in a plain backward, differentiable ops under create_graph.
std::tuple<TensorBase, TensorBase, TensorBase> group_norm_backward(
    const TensorBase& grad, const TensorBase& input, const TensorBase& weight, const TensorBase& mean,
    const TensorBase& rstd, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
    std::array<bool, 3> grad_input_mask);
// Convolution (runtime/src/autograd/formulas_conv.cpp). The input's gradient of
// convolution(input of input_sizes, weight, ...): the adjoint convolution of grad (transposed
// flipped), fitted to input_sizes; differentiable, so every derivative order stays in these ops.
TensorBase conv_input_backward(const TensorBase& grad, IntArrayRef input_sizes, const TensorBase& weight,
                               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                               IntArrayRef output_padding, int64_t groups);
// convolution(input, weight) without a bias (convolution_backward_weight's grad_output derivative).
TensorBase conv_forward_no_bias(const TensorBase& input, const TensorBase& weight, IntArrayRef stride,
                                IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                IntArrayRef output_padding, int64_t groups);
// The bias's gradient: grad summed over every dim but the channels (dim 1).
TensorBase conv_bias_backward(const TensorBase& grad);
// im2col's gradient: col2im of grad into self's last two sizes.
TensorBase im2col_backward(const TensorBase& grad, IntArrayRef self_sizes, IntArrayRef kernel_size,
                           IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);
// Fused attention's query, key and value gradients: the fused backward kernel in a plain
// backward; under create_graph the same gradients composed from differentiable ops (the [L, S]
// probabilities recomputed and stored), so second derivatives work
// (runtime/src/autograd/formulas_attention.cpp).
std::tuple<TensorBase, TensorBase, TensorBase> sdpa_backward(const TensorBase& grad, const TensorBase& query,
                                                             const TensorBase& key, const TensorBase& value,
                                                             const TensorBase& attn_mask, const TensorBase& output,
                                                             const TensorBase& logsumexp, bool is_causal, double scale,
                                                             double dropout_p, int64_t philox_seed,
                                                             int64_t philox_offset,
                                                             std::array<bool, 3> grad_input_mask);
// Fused recurrent cells (formulas_rnn.cpp): the gradients of input_gates, hidden_gates, the
// state (cx / hx), input_bias and hidden_bias. A plain backward runs the backward kernel op on
// the saved workspace; under create_graph the gates are recomputed from differentiable ops, so
// second derivatives work.
std::tuple<TensorBase, TensorBase, TensorBase, TensorBase, TensorBase> lstm_cell_gates_backward(
    const TensorBase& grad_hy, const TensorBase& grad_cy, const TensorBase& input_gates, const TensorBase& hidden_gates,
    const TensorBase& cx, const TensorBase& input_bias, const TensorBase& hidden_bias, const TensorBase& cy,
    const TensorBase& workspace, std::array<bool, 5> grad_input_mask);
std::tuple<TensorBase, TensorBase, TensorBase, TensorBase, TensorBase> gru_cell_gates_backward(
    const TensorBase& grad_hy, const TensorBase& input_gates, const TensorBase& hidden_gates, const TensorBase& hx,
    const TensorBase& input_bias, const TensorBase& hidden_bias, const TensorBase& workspace,
    std::array<bool, 5> grad_input_mask);
// Pooling (formulas_pooling.cpp). Max pooling's gradient is linear in grad_output, so its own
// gradient reads `grad` (input-shaped, [*, H, W]) at each output's flat index into its H*W plane:
// a gather of `indices`' shape.
TensorBase max_pool_double_backward(const TensorBase& grad, const TensorBase& indices, int64_t spatial_dims);
// The last n sizes (an adaptive pool's output_size, read off its gradient's shape).
DimVector trailing_sizes(IntArrayRef sizes, int64_t n);
// reduction: 0 none, 1 mean, 2 sum. `weight` undefined means no class weights.
TensorBase nll_loss_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& target,
                             const TensorBase& weight, int64_t reduction, int64_t ignore_index);

// Matrix products. mat2's gradient is computed in mat2's own layout: for weight.t() (linear)
// that makes the gradient reaching the weight contiguous, with no transposing copy.
// Joint: mat1's and mat2's gradients of alpha * mat1 @ mat2, each only when `mask` asks.
std::tuple<TensorBase, TensorBase> mm_backward(const TensorBase& grad, const TensorBase& mat1, const TensorBase& mat2,
                                               const Scalar& alpha, std::array<bool, 2> mask);
// The gradient of s * x: grad * conj(s), or grad itself when s is 1 (no pass over the data for
// the common default).
TensorBase scale_grad(const TensorBase& grad, const Scalar& s);
// A complex Scalar's conjugate; a real one unchanged. (Gradients are conjugate-Wirtinger, as
// PyTorch's: the gradient of s * x is grad * conj(s).)
Scalar scalar_conj(const Scalar& s);

// Pointwise.
TensorBase clamp_backward(const TensorBase& grad, const TensorBase& self, const std::optional<Scalar>& min,
                          const std::optional<Scalar>& max);
// clamp with Tensor bounds, as PyTorch: self's gradient where it lies within [min, max], each
// bound's where it was taken (min only where min < max; max also where max < min).
std::tuple<TensorBase, TensorBase, TensorBase> clamp_tensor_backward(const TensorBase& grad, const TensorBase& self,
                                                                     const TensorBase& min, const TensorBase& max,
                                                                     std::array<bool, 3> grad_input_mask);
TensorBase pow_backward(const TensorBase& grad, const TensorBase& self, const Scalar& exponent);
// Complex: sgn(z) = z / |z| and angle(z) are not holomorphic (PyTorch's sgn_backward and
// angle_backward); on real tensors their gradients are 0.
TensorBase sgn_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& result);
TensorBase angle_backward(const TensorBase& grad, const TensorBase& self);
// Joint formulas of binary pointwise ops: the gradients of both inputs from one call, sharing
// what both need; an input that `mask` leaves out gets an undefined tensor and costs nothing.
std::tuple<TensorBase, TensorBase> pow_backward(const TensorBase& grad, const TensorBase& self,
                                                const TensorBase& exponent, const TensorBase& result,
                                                std::array<bool, 2> mask);
std::tuple<TensorBase, TensorBase> div_backward(const TensorBase& grad, const TensorBase& self, const TensorBase& other,
                                                std::array<bool, 2> mask);
std::tuple<TensorBase, TensorBase> atan2_backward(const TensorBase& grad, const TensorBase& self,
                                                  const TensorBase& other, std::array<bool, 2> mask);
std::tuple<TensorBase, TensorBase> hypot_backward(const TensorBase& grad, const TensorBase& self,
                                                  const TensorBase& other, const TensorBase& result,
                                                  std::array<bool, 2> mask);
// maximum (is_max) and minimum: ties split the gradient evenly, as PyTorch.
std::tuple<TensorBase, TensorBase> extremum_backward(const TensorBase& grad, const TensorBase& self,
                                                     const TensorBase& other, bool is_max, std::array<bool, 2> mask);
// lerp(self, end, weight): end's gradient is grad * conj(weight), self's grad minus that.
std::tuple<TensorBase, TensorBase> lerp_backward(const TensorBase& grad, const TensorBase& weight,
                                                 std::array<bool, 2> mask);
// addcdiv(self, tensor1, tensor2, value): both share grad * value / tensor2.
std::tuple<TensorBase, TensorBase> addcdiv_backward(const TensorBase& grad, const TensorBase& tensor1,
                                                    const TensorBase& tensor2, const Scalar& value,
                                                    std::array<bool, 2> mask);

// Shape.
TensorBase permute_backward(const TensorBase& grad, IntArrayRef dims);
// One gradient per cat input; a legacy empty input of shape [0] gets an empty gradient.
TensorList cat_backward(const TensorBase& grad, const std::vector<DimVector>& sizes, int64_t dim);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORMULAS_H_
