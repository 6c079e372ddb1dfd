#ifndef KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
#define KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
// The fewest dims, in memory order, that visit every element of up to 5 same-shaped operands:
// computed once on the host, walked by the CPU loops (kiln/cpu/loops.h: pointwise ops, copy_,
// fill_) and by the CUDA offset calculator.
#include <cstdint>
#include "kiln/array_ref.h"

namespace kiln {

class TensorBase;

// Geometry of up to 5 operands (out + 4 inputs) with dims coalesced, innermost first.
struct StridedGeometry {
  int ndim = 0;
  int64_t sizes[16];
  int64_t strides[5][16];  // bytes
  char* base[5];
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense in the same order
};
// Operands of one shape (the output first): their sizes must equal the output's.
StridedGeometry make_geometry(const TensorBase* const* operands, int n);
// The same from raw operands over `shape`: strides in elements (0 along a broadcast dim),
// element sizes in bytes. copy_ and fill_ use it for a source broadcast to the destination.
StridedGeometry make_geometry(IntArrayRef shape, int n, const IntArrayRef* strides, const int64_t* element_sizes,
                              char* const* bases);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
