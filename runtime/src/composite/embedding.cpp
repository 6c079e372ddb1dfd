// embedding: rows of weight picked by indices (index_select), and its dense backward, which adds
// each gradient row into its index's row with index_add (in index order on the CPU, so the result
// does not depend on the thread count).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/bincount.h"
#include "kiln/gen/api/index_add.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/ne.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/where.h"

namespace kiln::composite {
namespace {

void check_indices(const char* op, const Tensor& indices) {
  KILN_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32, DTypeError, op, "indices",
             "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ",
             dtype_name(indices.dtype()), " instead");
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  KILN_CHECK(weight.dim() == 2, ShapeError, "embedding", "weight", "'weight' must be 2-D");
  check_indices("embedding", indices);
  KILN_CHECK(padding_idx < weight.size(0), IndexError, "embedding", "padding_idx",
             "Padding_idx must be within num_embeddings (got ", padding_idx, " for ", weight.size(0), " embeddings)");
  KILN_CHECK(!sparse, NotImplementedError, "embedding", "sparse",
             "sparse gradients are not implemented (kiln has no sparse kernels yet); use sparse=False");
  try {
    if (indices.dim() == 1) return kiln::index_select(weight, 0, indices);
    DimVector sizes = indices.sizes();
    sizes.push_back(weight.size(1));
    return kiln::index_select(weight, 0, kiln::reshape(indices, {-1})).view(sizes);
  } catch (const IndexError& e) {  // name this op and its argument, not the index_select it ran
    KILN_FAIL(IndexError, "embedding", "indices", "index out of range in self (", e.what(), ")");
  }
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  check_indices("embedding_dense_backward", indices);
  const int64_t dim = grad_output.size(-1);
  const Tensor flat = kiln::reshape(indices, {-1}).to(DType::Int64);
  Tensor rows = kiln::reshape(grad_output, {flat.numel(), dim});
  if (scale_grad_by_freq) {  // each row divided by how often its index occurs in the batch
    const Tensor counts = kiln::bincount(flat, Tensor(), num_weights);
    rows = rows / kiln::index_select(counts, 0, flat).unsqueeze(1).to(rows.dtype());
  }
  if (padding_idx >= 0)  // the padding row gets no gradient (where, not a product: NaN rows too)
    rows = kiln::where(kiln::ne(flat, wrapped_scalar(padding_idx)).unsqueeze(1), rows,
                       kiln::zeros({}, TensorOptions(rows.dtype(), rows.device())));
  return kiln::index_add(kiln::zeros({num_weights, dim}, TensorOptions(grad_output.dtype(), grad_output.device())), 0,
                         flat, rows);
}

}  // namespace kiln::composite
