#ifndef KILN_RUNTIME_INCLUDE_KILN_META_FOREACH_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_FOREACH_H_
// The meta step of ops over Tensor lists (`meta: foreach`): `_amp_foreach_non_finite_check_and_unscale_`
// and the fused optimizers. It checks, with PyTorch's messages, naming the op and argument:
//  - every list has the same number of tensors ("Tensor lists must have the same number of
//    tensors, got 2 and 3") and corresponding tensors have the same sizes and dtype; a list the
//    registry calls `optional` may instead be empty (state an option leaves unused), one it calls
//    `scalars` holds a 1-element float32 tensor per tensor of the first list (state_steps);
//  - every element is defined and strided, and every tensor is on one device;
//  - the op's other Tensor arguments (found_inf, inv_scale, grad_scale: PyTorch's foreach and
//    fused ops take such tensors as 1-element float32 scalars on the device) are 1-element
//    float32 tensors ("found_inf must be a 1-element tensor.", "... must be a float tensor.").
// The generated entry has checked each element of the first list against the declared dtypes.
// The kernel then only computes, writing into the mutable arguments:
//   void kiln::<backend>::<kernel>(const meta::ForeachPlan& plan, const TensorBaseList& self, ...,
//                                  const TensorBase& found_inf, ..., <other arguments>)
// An empty list is legal (the kernel has nothing to do), as PyTorch's amp kernel.
#include <cstdint>
#include <initializer_list>
#include <vector>
#include "kiln/tensor_base.h"

namespace kiln {
using TensorBaseList = std::vector<TensorBase>;  // as kiln/autograd/graph.h
}

namespace kiln::meta {

struct ForeachList {
  enum Kind { kSame, kOptional, kScalars };
  const char* name;
  const TensorBaseList& tensors;
  Kind kind = kSame;
};
struct ForeachScalar {
  const char* name;
  const TensorBase& tensor;
};

struct ForeachPlan {
  Device device;            // of every tensor: where the kernel runs
  int64_t length = 0;       // tensors per list
  int64_t max_numel = 0;    // of the largest tensor of a list (0: nothing to compute)
  int64_t total_numel = 0;  // summed over the first list
};

ForeachPlan foreach (const char* op, std::initializer_list<ForeachList> lists,
                     std::initializer_list<ForeachScalar> scalars);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_FOREACH_H_
