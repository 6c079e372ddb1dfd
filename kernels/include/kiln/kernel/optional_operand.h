#ifndef KILN_KERNELS_INCLUDE_KILN_KERNEL_OPTIONAL_OPERAND_H_
#define KILN_KERNELS_INCLUDE_KILN_KERNEL_OPTIONAL_OPERAND_H_
// An optional operand's data (a kernel's Tensor? argument, such as a norm's weight), or null when
// it is absent: the CPU and CUDA kernels test the pointer, not the tensor, in their loops.
#include "kiln/tensor_base.h"

namespace kiln::detail {

template <typename T>
const T* ptr_or_null(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

}  // namespace kiln::detail
#endif  // KILN_KERNELS_INCLUDE_KILN_KERNEL_OPTIONAL_OPERAND_H_
