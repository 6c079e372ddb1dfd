#ifndef KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
// How structured kernels receive tensors their meta step does not cast (indices, weights).
#include "kiln/tensor.h"

namespace kiln::meta {

// `t` when it is contiguous or undefined (an omitted Tensor?), else a contiguous copy.
Tensor contiguous_input(const Tensor& t);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
