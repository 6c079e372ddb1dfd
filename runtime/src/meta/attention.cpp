// Fused attention's meta steps (see kiln/meta/attention.h).
#include "kiln/meta/attention.h"

namespace kiln::meta {
namespace {

void check_like(const char* op, const char* name, const TensorBase& t, const TensorBase& query) {
  KILN_CHECK(t.dtype() == query.dtype(), DTypeError, op, name,
             "Expected query, key, and value to have the same dtype, "
             "but got query.dtype: ",
             dtype_name(query.dtype()), " and ", name, ".dtype: ", dtype_name(t.dtype()), " instead.");
  KILN_CHECK(t.device() == query.device(), DeviceError, op, name,
             "Expected query, key, and value to be on the same device, got ", query.device().str(), " and ",
             t.device().str());
}

}  // namespace

AttentionPlan attention(const char* op, const TensorBase& query, const TensorBase& key, const TensorBase& value,
                        const TensorBase& attn_mask, bool is_causal, double scale, double dropout_p,
                        int64_t philox_seed, int64_t philox_offset) {
  KILN_CHECK(dropout_p >= 0 && dropout_p <= 1, ValueError, op, "dropout_p",
             "dropout probability has to be between 0 and 1, but got ", dropout_p);
  KILN_CHECK(philox_offset % 4 == 0, ValueError, op, "philox_offset",
             "expected a generator offset that is a multiple of 4, got ", philox_offset);
  check_like(op, "key", key, query);
  check_like(op, "value", value, query);
  KILN_CHECK(query.dim() >= 2 && key.dim() == query.dim() && value.dim() == query.dim(), ShapeError, op, "query",
             "expected query, key and value of the same rank (at least 2), got ", shape_str(query.sizes()), ", ",
             shape_str(key.sizes()), " and ", shape_str(value.sizes()));
  const int64_t nd = query.dim();
  AttentionPlan p;
  p.B = 1;
  for (int64_t d = 0; d < nd - 2; ++d) {
    KILN_CHECK(key.size(d) == query.size(d) && value.size(d) == query.size(d), ShapeError, op, "key",
               "expected query, key and value with the same batch dims, got ", shape_str(query.sizes()), ", ",
               shape_str(key.sizes()), " and ", shape_str(value.sizes()));
    p.B *= query.size(d);
  }
  p.L = query.size(nd - 2);
  p.E = query.size(nd - 1);
  p.S = key.size(nd - 2);
  p.Ev = value.size(nd - 1);
  KILN_CHECK(key.size(nd - 1) == p.E, ShapeError, op, "key", "expected key's last dim to match query's (", p.E,
             "), got key of size ", shape_str(key.sizes()));
  KILN_CHECK(value.size(nd - 2) == p.S, ShapeError, op, "value", "expected value with as many rows as key (", p.S,
             "), got value of size ", shape_str(value.sizes()));
  p.scale = scale;
  p.is_causal = is_causal;
  p.dropout_p = dropout_p;
  p.philox_seed = uint64_t(philox_seed);
  p.philox_offset = uint64_t(philox_offset);
  p.dtype = query.dtype();
  p.lse_dtype = query.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  p.sizes = query.sizes();
  p.sizes[size_t(nd - 1)] = p.Ev;
  p.lse_sizes = DimVector(IntArrayRef(query.sizes().data(), size_t(nd - 1)));
  p.key_sizes = key.sizes();
  p.value_sizes = value.sizes();
  if (attn_mask.defined()) {
    KILN_CHECK(!is_causal, ValueError, op, "attn_mask",
               "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
    KILN_CHECK(attn_mask.dtype() == DType::Bool || attn_mask.dtype() == query.dtype(), DTypeError, op, "attn_mask",
               "Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: ",
               dtype_name(attn_mask.dtype()), " and  query.dtype: ", dtype_name(query.dtype()), " instead.");
    KILN_CHECK(attn_mask.device() == query.device(), DeviceError, op, "attn_mask", "expected attn_mask on ",
               query.device().str(), ", got ", attn_mask.device().str());
    // broadcast the mask (right-aligned) to [batch dims..., L, S]
    const int64_t md = attn_mask.dim();
    KILN_CHECK(md <= nd, ShapeError, op, "attn_mask", "attn_mask of size ", shape_str(attn_mask.sizes()),
               " has more dims than the attention scores");
    DimVector scores(IntArrayRef(query.sizes().data(), size_t(nd - 2)));
    scores.push_back(p.L);
    scores.push_back(p.S);
    std::vector<int64_t> strides(size_t(nd), 0);
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t md_d = d - (nd - md);
      if (md_d < 0) continue;
      const int64_t want = d == nd - 2 ? p.L : d == nd - 1 ? p.S : query.size(d);
      const int64_t have = attn_mask.size(md_d);
      KILN_CHECK(have == want || have == 1, ShapeError, op, "attn_mask", "attn_mask of size ",
                 shape_str(attn_mask.sizes()), " does not broadcast to the attention scores of size ",
                 shape_str(scores.ref()));
      strides[size_t(d)] = have == 1 ? 0 : attn_mask.stride(md_d);
    }
    p.mask = attn_mask.dtype() == DType::Bool ? AttentionMask::Bool : AttentionMask::Additive;
    p.mask_stride_l = strides[size_t(nd - 2)];
    p.mask_stride_s = strides[size_t(nd - 1)];
    p.mask_offsets.assign(size_t(p.B), 0);
    for (int64_t b = 0; b < p.B; ++b) {  // batch index -> offset through the broadcast strides
      int64_t rest = b, offset = 0;
      for (int64_t d = nd - 3; d >= 0; --d) {
        offset += (rest % query.size(d)) * strides[size_t(d)];
        rest /= query.size(d);
      }
      p.mask_offsets[size_t(b)] = offset;
    }
  }
  return p;
}

AttentionPlan attention_backward(const char* op, const TensorBase& grad_out, const TensorBase& query,
                                 const TensorBase& key, const TensorBase& value, const TensorBase& attn_mask,
                                 const TensorBase& output, const TensorBase& logsumexp, bool is_causal, double scale,
                                 double dropout_p, int64_t philox_seed, int64_t philox_offset) {
  AttentionPlan p =
      attention(op, query, key, value, attn_mask, is_causal, scale, dropout_p, philox_seed, philox_offset);
  KILN_CHECK(grad_out.sizes().equals(p.sizes.ref()) && output.sizes().equals(p.sizes.ref()), ShapeError, op, "grad_out",
             "expected grad_out and output of size ", shape_str(p.sizes.ref()), ", got ", shape_str(grad_out.sizes()),
             " and ", shape_str(output.sizes()));
  KILN_CHECK(logsumexp.sizes().equals(p.lse_sizes.ref()), ShapeError, op, "logsumexp", "expected logsumexp of size ",
             shape_str(p.lse_sizes.ref()), ", got ", shape_str(logsumexp.sizes()));
  KILN_CHECK(logsumexp.dtype() == DType::Float32 || logsumexp.dtype() == DType::Float64, DTypeError, op, "logsumexp",
             "expected a float32 or float64 logsumexp, got ", dtype_name(logsumexp.dtype()));
  KILN_CHECK(logsumexp.device() == query.device(), DeviceError, op, "logsumexp", "expected logsumexp on ",
             query.device().str(), ", got ", logsumexp.device().str());
  check_like(op, "grad_out", grad_out, query);
  check_like(op, "output", output, query);
  p.sizes = query.sizes();
  return p;
}

}  // namespace kiln::meta
