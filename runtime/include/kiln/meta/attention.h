#ifndef KILN_RUNTIME_INCLUDE_KILN_META_ATTENTION_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_ATTENTION_H_
// Fused attention's meta steps (`meta: attention`, `attention_backward`): softmax(q k^T * scale
// + mask) v over B = the batch dims' product of [L, E] queries, [S, E] keys and [S, Ev] values,
// computed by blocks with an online softmax so no [L, S] matrix is ever stored; the forward
// saves each query row's logsumexp for the backward, which recomputes the blocks. With
// dropout_p > 0 each probability is dropped by the draw of the generator state (philox_seed,
// philox_offset) that kiln/common/attention_dropout.h describes, in both directions.
//   void kiln::<backend>::_scaled_dot_product_attention_fused(const meta::AttentionPlan& plan,
//       const TensorBase& output, const TensorBase& logsumexp, const TensorBase& query,
//       const TensorBase& key, const TensorBase& value, const TensorBase& attn_mask)
//   void kiln::<backend>::_scaled_dot_product_attention_fused_backward(const meta::AttentionPlan& plan,
//       const TensorBase& grad_query, const TensorBase& grad_key, const TensorBase& grad_value,
//       const TensorBase& grad_out, const TensorBase& query, const TensorBase& key, const TensorBase& value,
//       const TensorBase& attn_mask, const TensorBase& output, const TensorBase& logsumexp)
// query, key, value (and the backward's tensors) arrive in any layout, the backend copying what
// it cannot read in place; attn_mask as given (it may be a broadcast view: never expanded), read
// through mask_offsets and the strides below.
#include <vector>
#include "kiln/tensor_base.h"

namespace kiln::meta {

enum class AttentionMask { None, Bool, Additive };

struct AttentionPlan {
  int64_t B = 0, L = 0, S = 0, E = 0, Ev = 0;
  double scale = 1;
  bool is_causal = false;  // query i sees keys j <= i (top-left aligned, as PyTorch)
  double dropout_p = 0;
  uint64_t philox_seed = 0, philox_offset = 0;  // the generator state the dropout draw starts at
  AttentionMask mask = AttentionMask::None;
  std::vector<int64_t> mask_offsets;             // per batch index b: the mask's element offset
  int64_t mask_stride_l = 0, mask_stride_s = 0;  // 0 where the mask broadcasts
  DimVector sizes;                               // output's: query's batch dims, L, Ev (grad_query: query's)
  DimVector lse_sizes;                           // logsumexp's: query's batch dims, L (float32 for 16-bit inputs)
  DimVector key_sizes, value_sizes;
  DType dtype = DType::Float32;
  DType lse_dtype = DType::Float32;  // float64 for float64 inputs
};

AttentionPlan attention(const char* op, const TensorBase& query, const TensorBase& key, const TensorBase& value,
                        const TensorBase& attn_mask, bool is_causal, double scale, double dropout_p,
                        int64_t philox_seed, int64_t philox_offset);
AttentionPlan attention_backward(const char* op, const TensorBase& grad_out, const TensorBase& query,
                                 const TensorBase& key, const TensorBase& value, const TensorBase& attn_mask,
                                 const TensorBase& output, const TensorBase& logsumexp, bool is_causal, double scale,
                                 double dropout_p, int64_t philox_seed, int64_t philox_offset);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_ATTENTION_H_
