#ifndef KILN_RUNTIME_INCLUDE_KILN_POINTWISE_DISPATCH_H_
#define KILN_RUNTIME_INCLUDE_KILN_POINTWISE_DISPATCH_H_
// What a generated per-op dtype switch (kiln/gen/pointwise/<op>.h) needs besides its functor:
// the limits of a pointwise call and the error for a dtype it has no case for. Kept free of
// tensor.h, so the CUDA kernel files that include the switches stay cheap to compile.
#include <initializer_list>
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/scalar.h"

namespace kiln {

inline constexpr int kMaxPointwiseInputs = 4;
inline constexpr int kMaxPointwiseScalars = 4;

namespace pointwise {
[[noreturn]] void throw_dtype_unsupported(const char* op, DType dtype, Device device,
                                          std::initializer_list<DType> supported);
}  // namespace pointwise
}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_POINTWISE_DISPATCH_H_
