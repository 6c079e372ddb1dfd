#ifndef KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
#define KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
// The fewest dims, in memory order, that visit every element of up to 5 same-shaped operands:
// computed once on the host, walked by the CPU loops and by the CUDA offset calculator.
#include <cstdint>

namespace kiln {

class Tensor;

// Geometry of up to 5 operands (out + 4 inputs) with dims coalesced, innermost first.
struct StridedGeometry {
  int ndim = 0;
  int64_t sizes[16];
  int64_t strides[5][16];  // bytes
  char* base[5];
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense in the same order
};
StridedGeometry make_geometry(const Tensor* const* operands, int n);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_STRIDED_GEOMETRY_H_
