#ifndef KILN_KERNELS_CPU_INDEX_SUPPORT_H_
#define KILN_KERNELS_CPU_INDEX_SUPPORT_H_
// What the CPU indexing kernels share: moving elements by their size alone
// (kiln/common/element_bytes.h), the index range check that runs before anything is written, and the row geometry of
// gather/scatter.
#include <cstdint>
#include <algorithm>
#include <cstring>
#include "kiln/common/element_bytes.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/tensor_base.h"

namespace kiln::cpu {

using bytes::visit_element_size;

// Every index in [-size, size) when `wrap` (negative ones count from the end), else in
// [0, size); the first one outside raises IndexError naming the op, before any write.
template <typename I>
void check_indices(const I* idx, int64_t n, int64_t size, bool wrap, const char* op, int64_t dim) {
  const int64_t lo = wrap ? -size : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = int64_t(idx[i]);
    KILN_CHECK(v >= lo && v < size, IndexError, op, "index", "index ", v, " is out of bounds for dimension ", dim,
               " with size ", size);
  }
}

// An index tensor's values as int64 (int32 indices are widened once: index_select and
// index_add accept both, as PyTorch).
struct Indices {
  const int64_t* data = nullptr;
  TensorBase widened;  // keeps a widened copy alive
};
inline Indices int64_indices(const TensorBase& index) {
  Indices r;
  if (index.dtype() == DType::Int64) {
    r.data = static_cast<const int64_t*>(index.data_ptr());
  } else {
    r.widened = kiln::detail::empty_dense(index.sizes(), DType::Int64, index.device());
    r.widened.copy_(index);
    r.data = static_cast<const int64_t*>(r.widened.data_ptr());
  }
  return r;
}

// gather/scatter walk index's shape row by row (a row: index's last dim). For row r, the
// element offsets of its start in index, in the tensor indexed along `dim` (self for gather, out
// for scatter: the coordinate at `dim` left out) and in the other tensor (src; for gather out,
// which has index's layout).
struct RowGeometry {
  int64_t ndim = 1, dim = 0, rows = 1, len = 1;
  DimVector shape, indexed_stride, other_stride;

  RowGeometry(IntArrayRef index_sizes, IntArrayRef indexed_sizes, IntArrayRef other_sizes, int64_t d) : dim(d) {
    ndim = std::max<int64_t>(1, int64_t(index_sizes.size()));
    shape = DimVector(size_t(ndim), 1);
    for (int64_t i = 0; i < int64_t(index_sizes.size()); ++i) shape[size_t(i)] = index_sizes[size_t(i)];
    indexed_stride = contiguous_strides(indexed_sizes);
    other_stride = contiguous_strides(other_sizes);
    len = shape[size_t(ndim - 1)];
    rows = 1;
    for (int64_t i = 0; i + 1 < ndim; ++i) rows *= shape[size_t(i)];
  }
  // Offsets of row r's first element: in the indexed tensor (dim's coordinate 0) and the other.
  void row_offsets(int64_t r, int64_t& indexed, int64_t& other) const {
    indexed = other = 0;
    for (int64_t i = ndim - 2; i >= 0; --i) {
      const int64_t c = r % shape[size_t(i)];
      r /= shape[size_t(i)];
      if (i != dim) indexed += c * indexed_stride[size_t(i)];
      other += c * other_stride[size_t(i)];
    }
  }
  int64_t dim_stride() const { return indexed_stride[size_t(dim)]; }
  int64_t last_stride_other() const { return other_stride[size_t(ndim - 1)]; }

 private:
  DimVector contiguous_strides(IntArrayRef sizes) const {  // a 0-d tensor as [1]
    DimVector out(size_t(ndim), 1);
    for (int64_t i = ndim - 2; i >= 0; --i) out[size_t(i)] = out[size_t(i + 1)] * sizes[size_t(i + 1)];
    return out;
  }
};

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_INDEX_SUPPORT_H_
