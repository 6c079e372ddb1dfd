#ifndef KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
// How structured kernels receive tensors their meta step does not cast (indices, weights).
#include "kiln/tensor_base.h"

namespace kiln::meta {

// The one "copy if needed" of kernel inputs: `t` itself when it is undefined (an omitted
// Tensor?) or already has `dtype` (and is contiguous, when `contiguous`), else a contiguous copy
// cast to `dtype` on t's device. along_dim_input and reduction_input are this with the plan's
// dtype.
TensorBase input_as(const TensorBase& t, DType dtype, bool contiguous);

// `t` when it is contiguous or undefined, else a contiguous copy.
inline TensorBase contiguous_input(const TensorBase& t) {
  return input_as(t, t.defined() ? t.dtype() : DType::Float32, true);
}

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_INPUTS_H_
