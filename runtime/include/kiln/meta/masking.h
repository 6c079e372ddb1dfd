#ifndef KILN_RUNTIME_INCLUDE_KILN_META_MASKING_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_MASKING_H_
// The meta steps of the mask ops (ops/indexing.yaml):
//   _nonzero_sized(self, count)             (`meta: nonzero_sized`): [count, self.dim()] int64
//   _masked_select_sized(self, mask, count) (`meta: masked_select_sized`): [count] of self's dtype
//   masked_scatter(self, mask, source)      (`meta: masked_scatter`): self broadcast with mask
//   void kiln::<backend>::<kernel>(const meta::MaskPlan& plan, const TensorBase& out, <the op's arguments>)
// nonzero and masked_select learn `count` in their composites (one read to the host) and the
// kernels check it against what they find. Every tensor argument reaches the kernel contiguous in
// its own shape; masked_scatter's kernel reads self and mask through the plan's broadcast strides.
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct MaskPlan {
  DimVector sizes;  // of the result
  DType dtype = DType::Float32;
  int64_t count = 0;       // nonzero / masked_select: the number of places found
  bool dense = true;       // masked_scatter: self and mask already have the result's shape
  DimVector self_strides;  // masked_scatter: element strides over the result's shape (0: broadcast)
  DimVector mask_strides;
};

MaskPlan nonzero_sized(const char* op, const TensorBase& self, int64_t count);
MaskPlan masked_select_sized(const char* op, const TensorBase& self, const TensorBase& mask, int64_t count);
MaskPlan masked_scatter(const char* op, const TensorBase& self, const TensorBase& mask, const TensorBase& source);

// The bool mask every mask op takes (PyTorch 1.13 refuses uint8 masks here).
void check_bool_mask(const char* op, const TensorBase& mask);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_MASKING_H_
