#ifndef KILN_RUNTIME_INCLUDE_KILN_DROPOUT_MASK_H_
#define KILN_RUNTIME_INCLUDE_KILN_DROPOUT_MASK_H_
// Dropout's keep rule, drawn in one place: a bool mask of `sizes` on `device`, one float32 uniform
// per element from `generator` (the default one when null), kept where the draw is below 1 - p.
// dropout and its variants (runtime/src/composite/dropout.cpp) and the fused attention's
// create_graph backward (sdpa_backward) draw through it; the attention kernels reproduce it
// element by element (kiln/common/attention_dropout.h, tested equal to this).
#include "kiln/generator.h"
#include "kiln/tensor.h"

namespace kiln {

Tensor dropout_keep_mask(IntArrayRef sizes, double p, Device device, Generator* generator = nullptr);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DROPOUT_MASK_H_
