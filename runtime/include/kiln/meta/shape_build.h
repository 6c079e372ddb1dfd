#ifndef KILN_RUNTIME_INCLUDE_KILN_META_SHAPE_BUILD_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_SHAPE_BUILD_H_
// The meta steps of the shape ops that copy with a kernel (`meta: flip`, `meta: triangle`,
// `meta: tri_indices`): PyTorch's checks and messages, and the geometry the kernels walk.
//   void kiln::<backend>::flip(const meta::FlipPlan&, const TensorBase& out, const TensorBase& self, IntArrayRef dims)
//   void kiln::<backend>::tril(const meta::TrianglePlan&, const TensorBase& out, const TensorBase& self,
//                              int64_t diagonal)   (and triu)
//   void kiln::<backend>::tril_indices(const meta::TriIndicesPlan&, const TensorBase& out)   (and triu_indices)
// self is contiguous; out is contiguous and may be self itself (tril_, triu_).
#include <vector>
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct FlipPlan {
  DimVector sizes;  // self's
  DType dtype = DType::Float32;
  // self's dims with neighbours of one kind (flipped or not) merged, so a kernel walks few dims
  DimVector shape;
  std::vector<bool> flipped;
};

FlipPlan flip(const char* op, const TensorBase& self, IntArrayRef dims);

// self seen as batch matrices [batch, rows, cols]; tril keeps j - i <= diagonal, triu j - i >= diagonal
struct TrianglePlan {
  DimVector sizes;
  DType dtype = DType::Float32;
  int64_t batch = 1, rows = 0, cols = 0;
};

TrianglePlan triangle(const char* op, const TensorBase& self, int64_t diagonal);

// the [2, count] coordinates of a row x col matrix's lower (tril) or upper (triu) part
struct TriIndicesPlan {
  DimVector sizes;
  DType dtype = DType::Int64;
  int64_t row = 0, col = 0, offset = 0;
};

TriIndicesPlan tri_indices(const char* op, int64_t row, int64_t col, int64_t offset, const TensorOptions& options);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_SHAPE_BUILD_H_
