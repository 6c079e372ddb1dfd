// Coalescing of operand geometry (kiln/strided_geometry.h), shared by the CPU loops and CUDA.
#include "kiln/strided_geometry.h"

#include <algorithm>
#include <cstdlib>
#include "kiln/error.h"
#include "kiln/tensor_base.h"

namespace kiln {

namespace {
constexpr int kMaxOperands = 5;
constexpr int kMaxDims = 16;

// ATen's reorder_dimensions rule: the first operand whose strides differ decides which of two dims
// is inner (smaller stride); broadcast (stride 0) strides say nothing. Returns >0 to swap.
int compare_dims(const IntArrayRef* strides, int n, int64_t a, int64_t b) {
  for (int k = 0; k < n; ++k) {
    int64_t sa = std::llabs(strides[k][size_t(a)]), sb = std::llabs(strides[k][size_t(b)]);
    if (sa == 0 || sb == 0) continue;
    if (sa < sb) return -1;
    if (sa > sb) return 1;
  }
  return 0;
}
}  // namespace

StridedGeometry make_geometry(const TensorBase* const* operands, int n) {
  KILN_CHECK(n >= 1 && n <= kMaxOperands, InternalError, "pointwise_loop", "", "expected 1 to ", kMaxOperands,
             " operands, got ", n);
  const TensorBase& out = *operands[0];
  IntArrayRef strides[kMaxOperands];
  int64_t element_sizes[kMaxOperands];
  char* bases[kMaxOperands];
  for (int k = 0; k < n; ++k) {
    KILN_CHECK(operands[k]->sizes().equals(out.sizes()), InternalError, "pointwise_loop", "", "operand ", k,
               " has shape ", operands[k]->shape_str(), ", the output ", out.shape_str());
    strides[k] = operands[k]->strides();
    element_sizes[k] = int64_t(operands[k]->element_size());
    bases[k] = static_cast<char*>(operands[k]->data_ptr());
  }
  return make_geometry(out.sizes(), n, strides, element_sizes, bases);
}

StridedGeometry make_geometry(IntArrayRef shape, int n, const IntArrayRef* operand_strides,
                              const int64_t* element_sizes, char* const* bases) {
  KILN_CHECK(n >= 1 && n <= kMaxOperands, InternalError, "pointwise_loop", "", "expected 1 to ", kMaxOperands,
             " operands, got ", n);
  StridedGeometry g;
  g.numel = 1;
  for (int64_t s : shape) g.numel *= s;
  for (int k = 0; k < n; ++k) g.base[k] = bases[k];
  if (g.numel == 0) return g;

  // innermost-first list of the dims that matter (size-1 dims change no address)
  DimVector perm;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d)
    if (shape[size_t(d)] != 1) perm.push_back(d);
  // insertion sort by stride (a stable sort that tolerates the rule's non-transitivity, as ATen)
  for (size_t i = 1; i < perm.size(); ++i) {
    for (size_t j = i; j > 0; --j) {
      if (compare_dims(operand_strides, n, perm[j - 1], perm[j]) > 0) std::swap(perm[j - 1], perm[j]);
      else break;
    }
  }

  // coalesce: dim d+1 joins the current dim when it continues every operand's stride pattern
  int64_t sizes[64];
  int64_t strides[kMaxOperands][64];
  int nd = 0;
  KILN_CHECK(perm.size() <= 64, NotImplementedError, "pointwise_loop", "", "tensors with more than 64 dims");
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t d = perm[i];
    int64_t size = shape[size_t(d)];
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < n && merge; ++k) {
        int64_t stride = operand_strides[k][size_t(d)] * element_sizes[k];
        merge = stride == sizes[nd - 1] * strides[k][nd - 1];
      }
      if (merge) {
        sizes[nd - 1] *= size;
        continue;
      }
    }
    sizes[nd] = size;
    for (int k = 0; k < n; ++k) strides[k][nd] = operand_strides[k][size_t(d)] * element_sizes[k];
    ++nd;
  }
  KILN_CHECK(nd <= kMaxDims, NotImplementedError, "pointwise_loop", "", "elementwise loops over more than ",
             kMaxDims, " non-mergeable dims (got ", nd, ")");

  g.ndim = nd;
  for (int d = 0; d < nd; ++d) {
    g.sizes[d] = sizes[d];
    for (int k = 0; k < n; ++k) g.strides[k][d] = strides[k][d];
  }
  // dense in one run: the fast path may index every operand as a plain array
  g.contiguous = true;
  if (nd == 1)
    for (int k = 0; k < n; ++k) g.contiguous = g.contiguous && g.strides[k][0] == element_sizes[k];
  else
    g.contiguous = nd == 0;
  return g;
}

}  // namespace kiln
