// Backward helper of the fused attention (see kiln/autograd/formulas.h).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused_backward.h"
#include "kiln/gen/api/_attention_scores.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/transpose.h"

namespace kiln {

std::tuple<TensorBase, TensorBase, TensorBase> sdpa_backward(const TensorBase& grad_in, const TensorBase& query_in,
                                                             const TensorBase& key_in, const TensorBase& value_in,
                                                             const TensorBase& attn_mask, const TensorBase& output,
                                                             const TensorBase& logsumexp, bool is_causal, double scale,
                                                             std::array<bool, 3> mask) {
  const Tensor grad(grad_in), query(query_in), key(key_in), value(value_in);
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel
    auto [dq, dk, dv] = kiln::_scaled_dot_product_attention_fused_backward(
        grad, query, key, value, Tensor(attn_mask), Tensor(output), Tensor(logsumexp), is_causal, scale);
    return {mask[0] ? dq : Tensor(), mask[1] ? dk : Tensor(), mask[2] ? dv : Tensor()};
  }
  // create_graph: P = softmax(masked scores) recomputed from differentiable ops, then
  // dV = P^T g, dS = P * (g V^T - rowsum(P * g V^T)), dQ = scale dS K, dK = scale dS^T Q
  const Tensor probs = kiln::softmax(kiln::_attention_scores(query, key, Tensor(attn_mask), is_causal, scale), -1);
  const Tensor dprobs = kiln::matmul(grad, kiln::transpose(value, -2, -1));
  const Tensor dscores = probs * (dprobs - kiln::sum(probs * dprobs, IntArrayRef{-1}, /*keepdim=*/true));
  return {mask[0] ? kiln::matmul(dscores, key) * scale : Tensor(),
          mask[1] ? kiln::matmul(kiln::transpose(dscores, -2, -1), query) * scale : Tensor(),
          mask[2] ? kiln::matmul(kiln::transpose(probs, -2, -1), grad) : Tensor()};
}

}  // namespace kiln
