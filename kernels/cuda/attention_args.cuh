#ifndef KILN_KERNELS_CUDA_ATTENTION_ARGS_CUH_
#define KILN_KERNELS_CUDA_ATTENTION_ARGS_CUH_
// What the CUDA attention kernels (attention.cu's chunks over cuBLAS, flash_attention.cu's
// tensor-core tiles) share: the plan's masking and dropout as kernel arguments, and the rule
// that masks a score.
#include <cstdint>
#include <limits>
#include "kiln/common/attention_dropout.h"
#include "kiln/meta/attention.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda::attention_args {

template <typename C>
__device__ C neg_inf() {
  return -std::numeric_limits<C>::infinity();
}

struct Args {
  int64_t L, S, sl, ss;
  bool causal;
  int mask_kind;  // 0 none, 1 bool, 2 additive
  attention::Dropout drop;
};

inline Args args_of(const meta::AttentionPlan& p, const TensorBase& mask) {
  Args a{p.L, p.S, p.mask_stride_l, p.mask_stride_s, p.is_causal, 0,
         attention::Dropout::make(p.dropout_p, p.philox_seed, p.philox_offset)};
  if (mask.defined()) a.mask_kind = p.mask == meta::AttentionMask::Bool ? 1 : 2;
  return a;
}

// Probability (b, i, j)'s dropout factor (1 without dropout): its index in the [B, L, S] draw.
template <typename C>
__device__ C drop_factor(const Args& a, int64_t b, int64_t i, int64_t j) {
  return a.drop.factor<C>(uint64_t((b * a.L + i) * a.S + j));
}

// Batch entry b's mask (null: none); M is an additive mask's element type.
template <typename M>
__device__ const void* mask_of(const Args& a, const void* mask, const int64_t* offsets, int64_t b) {
  if (a.mask_kind == 1) return static_cast<const bool*>(mask) + offsets[b];
  if (a.mask_kind == 2) return static_cast<const M*>(mask) + offsets[b];
  return nullptr;
}

// The masked score of (i, j); `mask` points at batch entry b's mask (null: none).
template <typename M, typename C>
__device__ C masked(C s, int64_t i, int64_t j, const Args& a, const void* mask) {
  if (a.causal && j > i) return neg_inf<C>();
  if (a.mask_kind == 1) return static_cast<const bool*>(mask)[i * a.sl + j * a.ss] ? s : neg_inf<C>();
  if (a.mask_kind == 2) return s + C(static_cast<const M*>(mask)[i * a.sl + j * a.ss]);
  return s;
}

}  // namespace kiln::cuda::attention_args
#endif  // KILN_KERNELS_CUDA_ATTENTION_ARGS_CUH_
