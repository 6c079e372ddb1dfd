// multi_head_attention_forward: torch.nn.functional.multi_head_attention_forward of PyTorch 1.13
// (sequence first), step by step as PyTorch's, so its checks, mask rules and results are the
// same. Without need_weights the heads run scaled_dot_product_attention's blockwise kernel, which
// never stores the [L, S] weights; with it the weights are materialized (softmax of the scores).
// 16-bit inputs compute in float32 and the results are rounded once.
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/core.h"
#include "kiln/gen/api/bmm.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/chunk.h"
#include "kiln/gen/api/constant_pad_nd.h"
#include "kiln/gen/api/dropout.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/scaled_dot_product_attention.h"
#include "kiln/gen/api/softmax.h"
#include "kiln/gen/api/split_with_sizes.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/transpose.h"
#include "kiln/gen/composite.h"

namespace kiln::composite {
namespace {

constexpr const char* kOp = "multi_head_attention_forward";

// PyTorch's _mha_shape_check: whether the call is batched (query 3-D) or not (2-D).
bool check_batched(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
                   const Tensor& attn_mask, int64_t num_heads) {
  KILN_CHECK(query.dim() == 2 || query.dim() == 3, ShapeError, kOp, "query",
             "query should be unbatched 2D or batched 3D tensor but received ", query.dim(), "-D query tensor");
  const bool batched = query.dim() == 3;
  const char* kind = batched ? "batched (3-D)" : "unbatched (2-D)";
  KILN_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), ShapeError, kOp,
             key.dim() == query.dim() ? "value" : "key", "For ", kind, " `query`, expected `key` and `value` to be ",
             query.dim(), "-D but found ", key.dim(), "-D and ", value.dim(), "-D tensors respectively");
  if (key_padding_mask.defined())
    KILN_CHECK(key_padding_mask.dim() == query.dim() - 1, ShapeError, kOp, "key_padding_mask", "For ", kind,
               " `query`, expected `key_padding_mask` to be `None` or ", query.dim() - 1, "-D but found ",
               key_padding_mask.dim(), "-D tensor instead");
  if (attn_mask.defined()) {
    KILN_CHECK(attn_mask.dim() == 2 || attn_mask.dim() == 3, ShapeError, kOp, "attn_mask", "For ", kind,
               " `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found ", attn_mask.dim(),
               "-D tensor instead");
    if (!batched && attn_mask.dim() == 3) {
      const std::vector<int64_t> want{num_heads, query.size(0), key.size(0)};
      KILN_CHECK(attn_mask.sizes().equals(want), ShapeError, kOp, "attn_mask", "Expected `attn_mask` shape to be ",
                 shape_str(want), " but got ", shape_str(attn_mask.sizes()));
    }
  }
  return batched;
}

void check_float_mask(const Tensor& mask, const Tensor& query, const char* name) {
  if (!mask.defined() || mask.dtype() == DType::Bool || mask.dtype() == DType::UInt8) return;
  KILN_CHECK(mask.dtype() == query.dtype(), DTypeError, kOp, name, "expected a bool ", name,
             " or a float one of query's dtype (", dtype_name(query.dtype()), "), got ", dtype_name(mask.dtype()));
}

void check_shape(const Tensor& t, const std::vector<int64_t>& want, const char* name, const char* what) {
  KILN_CHECK(t.sizes().equals(want), ShapeError, kOp, name, "expecting ", what, " shape of ", shape_str(want),
             ", but got ", shape_str(t.sizes()));
}

// q, k, v projected to embed_dim, as PyTorch's _in_projection_packed and _in_projection.
std::vector<Tensor> project(const Tensor& query, const Tensor& key, const Tensor& value, bool same_qkv, bool same_kv,
                            int64_t E, const Tensor& in_proj_weight, const Tensor& in_proj_bias,
                            bool use_separate_proj_weight, const Tensor& q_proj_weight, const Tensor& k_proj_weight,
                            const Tensor& v_proj_weight) {
  if (in_proj_bias.defined()) check_shape(in_proj_bias, {3 * E}, "in_proj_bias", "in_proj_bias");
  std::vector<Tensor> b = in_proj_bias.defined() ? kiln::chunk(in_proj_bias, 3) : std::vector<Tensor>(3);
  if (!use_separate_proj_weight) {
    KILN_CHECK(in_proj_weight.defined(), ValueError, kOp, "in_proj_weight",
               "use_separate_proj_weight is False but in_proj_weight is None");
    check_shape(in_proj_weight, {3 * E, E}, "in_proj_weight", "in_proj_weight");
    KILN_CHECK(key.size(-1) == E, ShapeError, kOp, "key", "with a packed in_proj_weight key and value need embed_dim (",
               E, ") features, got ", key.size(-1));
    // one product where the inputs are the same tensor (self-attention), as PyTorch's
    if (same_qkv) return kiln::chunk(kiln::linear(query, in_proj_weight, in_proj_bias), 3, -1);
    if (same_kv) {
      const TensorList w = kiln::split_with_sizes(in_proj_weight, {E, 2 * E});
      const TensorList bias = in_proj_bias.defined() ? kiln::split_with_sizes(in_proj_bias, {E, 2 * E}) : TensorList(2);
      const TensorList kv = kiln::chunk(kiln::linear(key, w[1], bias[1]), 2, -1);
      return {kiln::linear(query, w[0], bias[0]), kv[0], kv[1]};
    }
    const TensorList w = kiln::chunk(in_proj_weight, 3);
    return {kiln::linear(query, w[0], b[0]), kiln::linear(key, w[1], b[1]), kiln::linear(value, w[2], b[2])};
  }
  KILN_CHECK(q_proj_weight.defined(), ValueError, kOp, "q_proj_weight",
             "use_separate_proj_weight is True but q_proj_weight is None");
  KILN_CHECK(k_proj_weight.defined(), ValueError, kOp, "k_proj_weight",
             "use_separate_proj_weight is True but k_proj_weight is None");
  KILN_CHECK(v_proj_weight.defined(), ValueError, kOp, "v_proj_weight",
             "use_separate_proj_weight is True but v_proj_weight is None");
  check_shape(q_proj_weight, {E, E}, "q_proj_weight", "query weights");
  check_shape(k_proj_weight, {E, key.size(-1)}, "k_proj_weight", "key weights");
  check_shape(v_proj_weight, {E, value.size(-1)}, "v_proj_weight", "value weights");
  return {kiln::linear(query, q_proj_weight, b[0]), kiln::linear(key, k_proj_weight, b[1]),
          kiln::linear(value, v_proj_weight, b[2])};
}

// A (1, 1, E) bias_k or bias_v (any leading 1s), repeated over the batch as one more key.
Tensor bias_row(const Tensor& bias, int64_t bsz, int64_t E, const char* name) {
  bool ones = bias.dim() >= 1 && bias.dim() <= 3 && bias.size(-1) == E;
  for (int64_t d = 0; ones && d + 1 < bias.dim(); ++d) ones = bias.size(d) == 1;
  KILN_CHECK(ones, ShapeError, kOp, name, "expecting ", name, " of shape ", shape_str({1, 1, E}), ", but got ",
             shape_str(bias.sizes()));
  return bias.reshape({1, 1, E}).expand({1, bsz, E});
}

// One more key column of the masks (bias_k, add_zero_attn): visible (False, 0).
Tensor pad_key(const Tensor& mask) { return mask.defined() ? kiln::constant_pad_nd(mask, {0, 1}, 0) : mask; }

// A static_k / static_v of (N * num_heads, S, head_dim).
void check_static(const Tensor& t, int64_t heads_total, int64_t head_dim, const char* name) {
  KILN_CHECK(t.dim() == 3, ShapeError, kOp, name, "expecting ", name, " of 3 dims (N * num_heads, S, head_dim), got ",
             shape_str(t.sizes()));
  KILN_CHECK(t.size(0) == heads_total, ShapeError, kOp, name, "expecting ", name, ".size(0) of ", heads_total,
             ", but got ", t.size(0));
  KILN_CHECK(t.size(2) == head_dim, ShapeError, kOp, name, "expecting ", name, ".size(2) of ", head_dim, ", but got ",
             t.size(2));
}

// The op in its inputs' dtype.
std::tuple<Tensor, Tensor> mha_forward(const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
                                       int64_t embed_dim_to_check, int64_t num_heads, const Tensor& in_proj_weight,
                                       const Tensor& in_proj_bias, const Tensor& bias_k, const Tensor& bias_v,
                                       bool add_zero_attn, double dropout_p, const Tensor& out_proj_weight,
                                       const Tensor& out_proj_bias, bool training, const Tensor& key_padding_mask_in,
                                       bool need_weights, const Tensor& attn_mask_in, bool use_separate_proj_weight,
                                       const Tensor& q_proj_weight, const Tensor& k_proj_weight,
                                       const Tensor& v_proj_weight, const Tensor& static_k, const Tensor& static_v,
                                       bool average_attn_weights) {
  const bool batched = check_batched(query_in, key_in, value_in, key_padding_mask_in, attn_mask_in, num_heads);
  const bool same_kv = key_in.is_same(value_in), same_qkv = same_kv && query_in.is_same(key_in);
  // unbatched: a batch of one, squeezed at the end
  const Tensor query = batched ? query_in : query_in.unsqueeze(1);
  const Tensor key = batched ? key_in : key_in.unsqueeze(1);
  const Tensor value = batched ? value_in : value_in.unsqueeze(1);
  Tensor key_padding_mask =
      batched || !key_padding_mask_in.defined() ? key_padding_mask_in : key_padding_mask_in.unsqueeze(0);
  const int64_t tgt_len = query.size(0), bsz = query.size(1), E = query.size(2), src_len = key.size(0);

  if (key_padding_mask.defined())
    KILN_CHECK(key_padding_mask.dtype() == DType::Bool || is_floating(key_padding_mask.dtype()), DTypeError, kOp,
               "key_padding_mask", "only bool and floating types of key_padding_mask are supported, got ",
               dtype_name(key_padding_mask.dtype()));
  KILN_CHECK(E == embed_dim_to_check, ValueError, kOp, "embed_dim_to_check", "was expecting embedding dimension of ",
             embed_dim_to_check, ", but got ", E);
  KILN_CHECK(num_heads > 0, ValueError, kOp, "num_heads", "num_heads must be positive, got ", num_heads);
  const int64_t head_dim = E / num_heads, heads_total = bsz * num_heads;
  KILN_CHECK(head_dim * num_heads == E, ValueError, kOp, "num_heads", "embed_dim ", E, " not divisible by num_heads ",
             num_heads);
  if (use_separate_proj_weight)
    KILN_CHECK(key.size(0) == value.size(0) && key.size(1) == value.size(1), ShapeError, kOp, "key",
               "key's sequence and batch dims ", shape_str({key.size(0), key.size(1)}), " do not match value's ",
               shape_str({value.size(0), value.size(1)}));
  else
    KILN_CHECK(key.sizes().equals(value.sizes()), ShapeError, kOp, "key", "key shape ", shape_str(key.sizes()),
               " does not match value shape ", shape_str(value.sizes()));
  check_float_mask(key_padding_mask, query, "key_padding_mask");
  check_float_mask(attn_mask_in, query, "attn_mask");
  KILN_CHECK(out_proj_weight.dim() == 2 && out_proj_weight.size(1) == E, ShapeError, kOp, "out_proj_weight",
             "expecting out_proj_weight of shape (E_out, ", E, "), got ", shape_str(out_proj_weight.sizes()));

  std::vector<Tensor> qkv = project(query, key, value, same_qkv, same_kv, E, in_proj_weight, in_proj_bias,
                                    use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight);
  Tensor q = qkv[0], k = qkv[1], v = qkv[2];

  Tensor attn_mask = attn_mask_in;
  if (attn_mask.defined()) {
    if (attn_mask.dtype() == DType::UInt8) attn_mask = attn_mask.to(DType::Bool);  // deprecated in PyTorch, accepted
    KILN_CHECK(is_floating(attn_mask.dtype()) || attn_mask.dtype() == DType::Bool, DTypeError, kOp, "attn_mask",
               "Only float, byte, and bool types are supported for attn_mask, not ", dtype_name(attn_mask.dtype()));
    if (attn_mask.dim() == 2) {
      const std::vector<int64_t> want{tgt_len, src_len};
      KILN_CHECK(attn_mask.sizes().equals(want), ShapeError, kOp, "attn_mask", "The shape of the 2D attn_mask is ",
                 shape_str(attn_mask.sizes()), ", but should be ", shape_str(want), ".");
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      const std::vector<int64_t> want{heads_total, tgt_len, src_len};
      KILN_CHECK(attn_mask.sizes().equals(want), ShapeError, kOp, "attn_mask", "The shape of the 3D attn_mask is ",
                 shape_str(attn_mask.sizes()), ", but should be ", shape_str(want), ".");
    }
  }

  KILN_CHECK(bias_k.defined() == bias_v.defined(), ValueError, kOp, bias_k.defined() ? "bias_v" : "bias_k",
             "bias_k and bias_v must both be given or both be None");
  if (bias_k.defined()) {
    KILN_CHECK(!static_k.defined(), ValueError, kOp, "static_k", "bias cannot be added to static key.");
    KILN_CHECK(!static_v.defined(), ValueError, kOp, "static_v", "bias cannot be added to static value.");
    k = kiln::cat({k, bias_row(bias_k, bsz, E, "bias_k")});
    v = kiln::cat({v, bias_row(bias_v, bsz, E, "bias_v")});
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }

  // heads: (L, N, E) -> (N * num_heads, L, head_dim)
  q = q.reshape({tgt_len, heads_total, head_dim}).transpose(0, 1);
  if (static_k.defined()) {
    check_static(static_k, heads_total, head_dim, "static_k");
    k = static_k;
  } else {
    k = k.reshape({k.size(0), heads_total, head_dim}).transpose(0, 1);
  }
  if (static_v.defined()) {
    check_static(static_v, heads_total, head_dim, "static_v");
    v = static_v;
  } else {
    v = v.reshape({v.size(0), heads_total, head_dim}).transpose(0, 1);
  }
  KILN_CHECK(k.size(1) == v.size(1), ShapeError, kOp, static_v.defined() ? "static_v" : "static_k",
             "expecting as many keys as values, got ", k.size(1), " keys and ", v.size(1), " values");
  if (add_zero_attn) {
    k = kiln::cat({k, kiln::zeros({heads_total, 1, head_dim}, TensorOptions(k.dtype(), k.device()))}, 1);
    v = kiln::cat({v, kiln::zeros({heads_total, 1, head_dim}, TensorOptions(v.dtype(), v.device()))}, 1);
    attn_mask = pad_key(attn_mask);
    key_padding_mask = pad_key(key_padding_mask);
  }
  const int64_t keys = k.size(1);
  // PyTorch checks attn_mask against key's length; a static_k of another length fails in its product
  if (attn_mask.defined())
    KILN_CHECK(attn_mask.size(-1) == keys, ShapeError, kOp, "attn_mask", "expecting attn_mask over ", keys,
               " keys (static_k's, with bias_k and add_zero_attn), got ", shape_str(attn_mask_in.sizes()));

  const double inf = std::numeric_limits<double>::infinity();
  if (key_padding_mask.defined()) {
    check_shape(key_padding_mask, {bsz, keys}, "key_padding_mask", "key_padding_mask");
    const Tensor per_head =
        key_padding_mask.reshape({bsz, 1, 1, keys}).expand({bsz, num_heads, 1, keys}).reshape({heads_total, 1, keys});
    if (!attn_mask.defined()) {
      attn_mask = per_head;
    } else if (attn_mask.dtype() == DType::Bool) {
      // a float key_padding_mask hides where nonzero, as PyTorch's logical_or
      attn_mask = kiln::logical_or(attn_mask, per_head);
    } else {
      KILN_CHECK(per_head.dtype() == DType::Bool, DTypeError, kOp, "key_padding_mask",
                 "a float attn_mask takes a bool key_padding_mask only (masked_fill_ only supports boolean masks, "
                 "but got mask with dtype ",
                 dtype_name(per_head.dtype()), ")");
      attn_mask = kiln::masked_fill(attn_mask, per_head, -inf);
    }
  }
  // bool masks hide with -inf (True: do not attend)
  if (attn_mask.defined() && attn_mask.dtype() == DType::Bool)
    attn_mask =
        kiln::masked_fill(kiln::zeros(attn_mask.sizes(), TensorOptions(q.dtype(), q.device())), attn_mask, -inf);

  if (!training) dropout_p = 0.0;
  // PyTorch checks p only where it drops (p > 0): a negative or NaN p means no dropout there too
  KILN_CHECK(dropout_p <= 1.0 || std::isnan(dropout_p), ValueError, kOp, "dropout_p",
             "dropout probability has to be between 0 and 1, but got ", dropout_p);
  const double scale = 1.0 / std::sqrt(double(head_dim));

  Tensor attn_output, weights;
  if (need_weights) {
    // PyTorch's math: (q / sqrt(head_dim)) k^T + mask, softmax, dropout, @ v
    Tensor scores = kiln::bmm(q / std::sqrt(double(head_dim)), kiln::transpose(k, -2, -1));
    if (attn_mask.defined()) scores = scores + attn_mask;
    weights = kiln::softmax(scores, -1);
    // PyTorch returns the dropped weights
    if (dropout_p > 0.0) weights = kiln::dropout(weights, dropout_p, true);
    attn_output = kiln::bmm(weights, v);
  } else {
    attn_output =
        kiln::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p > 0.0 ? dropout_p : 0.0, false, scale);
  }
  // heads back: (N * num_heads, L, head_dim) -> (L * N, E), then the output projection
  attn_output = kiln::transpose(attn_output, 0, 1).reshape({tgt_len * bsz, E});
  attn_output = kiln::linear(attn_output, out_proj_weight, out_proj_bias);
  attn_output = attn_output.reshape({tgt_len, bsz, attn_output.size(1)});
  if (!batched) attn_output = attn_output.squeeze(1);

  // PyTorch returns None: kiln's ops return an empty tensor for an absent result
  if (!need_weights) return {attn_output, kiln::empty({0}, TensorOptions(attn_output.dtype(), attn_output.device()))};
  weights = weights.reshape({bsz, num_heads, tgt_len, keys});
  if (average_attn_weights) weights = kiln::sum(weights, IntArrayRef{1}) / double(num_heads);
  if (!batched) weights = weights.squeeze(0);
  return {attn_output, weights};
}

}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, int64_t embed_dim_to_check, int64_t num_heads,
    const Tensor& in_proj_weight, const Tensor& in_proj_bias, const Tensor& bias_k, const Tensor& bias_v,
    bool add_zero_attn, double dropout_p, const Tensor& out_proj_weight, const Tensor& out_proj_bias, bool training,
    const Tensor& key_padding_mask, bool need_weights, const Tensor& attn_mask, bool use_separate_proj_weight,
    const Tensor& q_proj_weight, const Tensor& k_proj_weight, const Tensor& v_proj_weight, const Tensor& static_k,
    const Tensor& static_v, bool average_attn_weights) {
  const DType dt = query.dtype();
  if (dt != DType::Float16 && dt != DType::BFloat16)
    return mha_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                       add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask,
                       need_weights, attn_mask, use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                       static_k, static_v, average_attn_weights);
  // 16-bit inputs compute on float32 copies, rounded once at the end (as scaled_dot_product_attention's kernel):
  // a chain of projections, softmax and products rounded to 16 bits after each step drifts by percents.
  // Tensors of another dtype pass as they are, so the dtype checks still see them; one tensor stays one tensor.
  std::vector<std::pair<const TensorImpl*, Tensor>> copies;
  auto wide = [&](const Tensor& t) {
    if (!t.defined() || t.dtype() != dt) return t;
    for (const auto& [impl, copy] : copies)
      if (impl == t.impl()) return copy;
    copies.push_back({t.impl(), t.to(DType::Float32)});
    return copies.back().second;
  };
  const Tensor q = wide(query), k = wide(key), v = wide(value), w_in = wide(in_proj_weight), b_in = wide(in_proj_bias),
               bk = wide(bias_k), bv = wide(bias_v), w_out = wide(out_proj_weight), b_out = wide(out_proj_bias),
               kpm = wide(key_padding_mask), mask = wide(attn_mask), wq = wide(q_proj_weight), wk = wide(k_proj_weight),
               wv = wide(v_proj_weight), sk = wide(static_k), sv = wide(static_v);
  auto [output, weights] = mha_forward(q, k, v, embed_dim_to_check, num_heads, w_in, b_in, bk, bv, add_zero_attn,
                                       dropout_p, w_out, b_out, training, kpm, need_weights, mask,
                                       use_separate_proj_weight, wq, wk, wv, sk, sv, average_attn_weights);
  return {output.to(dt), weights.to(dt)};
}

}  // namespace kiln::composite
