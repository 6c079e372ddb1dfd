#ifndef KILN_RUNTIME_INCLUDE_KILN_META_CHANNEL_SHUFFLE_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_CHANNEL_SHUFFLE_H_
// The meta step of channel_shuffle (`meta: channel_shuffle`): PyTorch's checks and messages,
// and self seen as [batch, groups, channels / groups, inner]. The kernels write
//   out[b, i * groups + j, s] = self[b, j * (channels / groups) + i, s]
// (the transpose of the middle two dims), moving whole `inner` runs:
//   void kiln::<backend>::channel_shuffle(const meta::ChannelShufflePlan&, const TensorBase& out,
//                                         const TensorBase& self)
// self and out are contiguous.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct ChannelShufflePlan {
  DimVector sizes;  // self's
  DType dtype = DType::Float32;
  int64_t batch = 0, groups = 1, per_group = 0, inner = 1;  // per_group = channels / groups
};

ChannelShufflePlan channel_shuffle(const char* op, const TensorBase& self, int64_t groups);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_CHANNEL_SHUFFLE_H_
