#ifndef KILN_RUNTIME_INCLUDE_KILN_DESTINATION_H_
#define KILN_RUNTIME_INCLUDE_KILN_DESTINATION_H_
// Writing an op's result into a tensor the caller gave (out=, in-place), with PyTorch's rules.
// Used by generated op code; not part of the public API.
#include <initializer_list>
#include "kiln/tensor_base.h"

namespace kiln::support {

// PyTorch's resize_ for out=: keep the storage when it is big enough, else a new one.
void resize_out(TensorBase& out, IntArrayRef shape);

// `dst` (argument `arg` of `op`) can receive a `dtype` result computed on `device`: defined,
// on that device, and `dtype` castable to its dtype.
void check_destination(const char* op, const char* arg, const TensorBase& dst, DType dtype, Device device);
// No two elements of `dst` at one address (an expanded tensor): the result would depend on the
// write order, so PyTorch refuses, and so do we.
void check_no_internal_overlap(const char* op, const char* arg, const TensorBase& dst);

// Checks `dst` (argument `arg` of `op`) for a result of `sizes` and `dtype` on `device`: same
// device, `dtype` castable to dst's, no two elements at one address, and the shape (resized
// when `resize`, as out= does; an in-place destination must already have it). Returns the
// tensor to compute into: `dst` itself when it is contiguous, of `dtype`, and shares no
// storage with `inputs`; else a fresh one, which finish_destination copies into `dst`.
// Nothing is written to `dst` here, so a kernel that fails leaves it as it was.
TensorBase prepare_destination(const char* op, const char* arg, TensorBase& dst, IntArrayRef sizes, DType dtype,
                               Device device, bool resize, std::initializer_list<const TensorBase*> inputs);
void finish_destination(const TensorBase& written, TensorBase& dst);

}  // namespace kiln::support
#endif  // KILN_RUNTIME_INCLUDE_KILN_DESTINATION_H_
