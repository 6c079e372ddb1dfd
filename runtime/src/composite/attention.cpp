// scaled_dot_product_attention: the fused blockwise kernel op, dropout included; and the masked
// scores the math path (double backward) recomputes.
#include <cmath>
#include <limits>
#include "kiln/core.h"
#include "kiln/gen/api/_attention_scores.h"
#include "kiln/gen/api/_scaled_dot_product_attention_fused.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/gen/api/triu.h"
#include "kiln/gen/composite.h"
#include "kiln/generator.h"
#include "kiln/meta/attention.h"

namespace kiln::composite {

Tensor attention_scores(const Tensor& query, const Tensor& key, const Tensor& attn_mask, bool is_causal, double scale) {
  Tensor scores = kiln::matmul(query, kiln::transpose(key, -2, -1)) * scale;
  const double inf = std::numeric_limits<double>::infinity();
  if (attn_mask.defined())
    scores = attn_mask.dtype() == DType::Bool ? kiln::masked_fill(scores, attn_mask.logical_not(), -inf)
                                              : scores + attn_mask;
  if (is_causal) {
    const Tensor above =
        kiln::triu(kiln::ones({query.size(-2), key.size(-2)}, TensorOptions(DType::Bool, query.device())), 1);
    scores = kiln::masked_fill(scores, above, -inf);
  }
  return scores;
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  KILN_CHECK(dropout_p >= 0 && dropout_p <= 1, ValueError, op, "dropout_p",
             "dropout probability has to be between 0 and 1, but got ", dropout_p);
  KILN_CHECK(query.dim() >= 2, ShapeError, op, "query", "expected query of at least 2 dims, got ",
             shape_str(query.sizes()));
  const double s = scale ? *scale : 1.0 / std::sqrt(double(query.size(-1)));
  // Dropout reserves the draw dropout(softmax(scores), p) would make, one float32 uniform per
  // score (none when p == 1, which drops everything), and the kernel drops by that draw.
  // The inputs are checked first, so a call that fails draws nothing.
  GeneratorState draw;
  if (dropout_p > 0 && dropout_p < 1) {
    const meta::AttentionPlan plan = meta::attention(op, query, key, value, attn_mask, is_causal, s, 0, 0, 0);
    if (plan.B * plan.L * plan.S > 0) draw = default_generator().reserve(uint64_t(plan.B * plan.L * plan.S));
  }
  auto fused = [&](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
    return std::get<0>(kiln::_scaled_dot_product_attention_fused(q, k, v, mask, is_causal, s, dropout_p,
                                                                 int64_t(draw.seed), int64_t(draw.offset)));
  };
  // 16-bit inputs: the CPU kernel computes in float32 and rounds once. On CUDA they still run
  // the float32 kernel on float32 copies: the tensor-core kernels the fused op runs for them
  // (kernels/cuda/flash_attention.cu) are compiled but have not yet run on a device.
  const DType dt = query.dtype();
  if ((dt == DType::Float16 || dt == DType::BFloat16) && query.is_cuda()) {
    const Tensor mask = attn_mask.defined() && attn_mask.dtype() == dt ? attn_mask.to(DType::Float32) : attn_mask;
    return fused(query.to(DType::Float32), key.to(DType::Float32), value.to(DType::Float32), mask).to(dt);
  }
  return fused(query, key, value, attn_mask);
}

}  // namespace kiln::composite
