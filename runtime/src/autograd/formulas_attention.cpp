// Backward helper of the fused attention (see kiln/autograd/formulas.h).
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/dropout_mask.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused_backward.h"
#include "kiln/gen/api/_attention_scores.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/random.h"

namespace kiln {

std::tuple<TensorBase, TensorBase, TensorBase> sdpa_backward(const TensorBase& grad_in, const TensorBase& query_in,
                                                             const TensorBase& key_in, const TensorBase& value_in,
                                                             const TensorBase& attn_mask, const TensorBase& output,
                                                             const TensorBase& logsumexp, bool is_causal, double scale,
                                                             double dropout_p, int64_t philox_seed,
                                                             int64_t philox_offset, std::array<bool, 3> mask) {
  const Tensor grad(grad_in), query(query_in), key(key_in), value(value_in);
  if (!GradMode::is_enabled()) {  // plain backward: the fused kernel
    auto [dq, dk, dv] = kiln::_scaled_dot_product_attention_fused_backward(
        grad, query, key, value, Tensor(attn_mask), Tensor(output), Tensor(logsumexp), is_causal, scale, dropout_p,
        philox_seed, philox_offset);
    return {mask[0] ? dq : Tensor(), mask[1] ? dk : Tensor(), mask[2] ? dv : Tensor()};
  }
  // create_graph: P = softmax(masked scores) recomputed from differentiable ops, Z the dropout
  // factors redrawn from the forward's generator state (as dropout draws them), then
  // dV = (P Z)^T g, dP = (g V^T) Z, dS = P * (dP - rowsum(P * dP)), dQ = scale dS K, dK = scale dS^T Q
  const Tensor probs = kiln::softmax(kiln::_attention_scores(query, key, Tensor(attn_mask), is_causal, scale), -1);
  Tensor kept = probs, dprobs = kiln::matmul(grad, kiln::transpose(value, -2, -1));
  if (dropout_p > 0) {
    Generator replay;
    replay.set_state({uint64_t(philox_seed), uint64_t(philox_offset)});
    Tensor z;
    {
      NoGradGuard no_grad;
      z = dropout_keep_mask(probs.sizes(), dropout_p, probs.device(), &replay).to(probs.dtype()) *
          (dropout_p < 1 ? 1.0 / (1.0 - dropout_p) : 0.0);
    }
    kept = probs * z;
    dprobs = dprobs * z;
  }
  const Tensor dscores = probs * (dprobs - kiln::sum(probs * dprobs, IntArrayRef{-1}, /*keepdim=*/true));
  return {mask[0] ? kiln::matmul(dscores, key) * scale : Tensor(),
          mask[1] ? kiln::matmul(kiln::transpose(dscores, -2, -1), query) * scale : Tensor(),
          mask[2] ? kiln::matmul(kiln::transpose(kept, -2, -1), grad) : Tensor()};
}

}  // namespace kiln
