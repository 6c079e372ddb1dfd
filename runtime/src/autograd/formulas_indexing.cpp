// Backward helpers of the indexing ops (see kiln/autograd/formulas.h): each gradient moves
// values with the adjoint indexing op (gather <-> scatter_add, index_select <-> index_add,
// take <-> put), so it is itself differentiable.
#include <algorithm>
#include <utility>
#include <vector>
#include "kiln/autograd/formulas.h"
#include "kiln/core.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/conj.h"
#include "kiln/gen/api/div.h"
#include "kiln/gen/api/expand.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/gather.h"
#include "kiln/gen/api/index_add.h"
#include "kiln/gen/api/index_fill.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/masked_scatter.h"
#include "kiln/gen/api/masked_select.h"
#include "kiln/gen/api/put.h"
#include "kiln/gen/api/reshape.h"
#include "kiln/gen/api/scatter.h"
#include "kiln/gen/api/scatter_add.h"
#include "kiln/gen/api/scatter_reduce.h"
#include "kiln/gen/api/slice_backward.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/take.h"
#include "kiln/gen/api/view.h"
#include "kiln/gen/api/where.h"

namespace kiln {
namespace {

// The storage positions of a (sizes, strides, offset) view's elements, flattened in its order.
Tensor storage_positions(IntArrayRef sizes, IntArrayRef strides, int64_t offset, Device device) {
  const TensorOptions longs(kInt64, device);
  Tensor pos = full({}, offset, longs);
  for (size_t k = 0; k < sizes.size(); ++k) {
    DimVector shape(sizes.size(), 1);
    shape[k] = sizes[k];
    pos = pos + arange(sizes[k], longs).mul(Scalar(strides[k])).view(shape);
  }
  return pos.expand(sizes).reshape({-1});
}

// The highest storage position a non-empty view reaches (strides are non-negative).
int64_t last_position(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  for (size_t k = 0; k < sizes.size(); ++k) offset += (sizes[k] - 1) * strides[k];
  return offset;
}

// Whether two elements of the view may share a place: with its dims by increasing stride, each
// stride must step past everything the smaller ones span.
bool may_overlap(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims that move
  for (size_t k = 0; k < sizes.size(); ++k)
    if (sizes[k] > 1) dims.emplace_back(strides[k], sizes[k]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;
  for (const auto& [stride, size] : dims) {
    if (stride <= span) return true;
    span += stride * (size - 1);
  }
  return false;
}

}  // namespace

TensorBase as_strided_backward(const TensorBase& grad_in, const TensorBase& self, IntArrayRef size, IntArrayRef stride,
                               std::optional<int64_t> storage_offset) {
  const Tensor grad(grad_in);
  if (grad.numel() == 0 || self.numel() == 0) return zeros(self.sizes(), grad.options());
  const int64_t out_offset = storage_offset.value_or(self.storage_offset()), in_offset = self.storage_offset();
  const int64_t lo = std::min(out_offset, in_offset);
  const int64_t hi =
      std::max(last_position(size, stride, out_offset), last_position(self.sizes(), self.strides(), in_offset));
  const Tensor out_pos = storage_positions(size, stride, out_offset - lo, grad.device());
  const Tensor in_pos = storage_positions(self.sizes(), self.strides(), in_offset - lo, grad.device());
  const Tensor storage = index_add(zeros({hi - lo + 1}, grad.options()), 0, out_pos, grad.reshape({-1}));
  Tensor result = index_select(storage, 0, in_pos);
  if (may_overlap(self.sizes(), self.strides())) {
    const Tensor count =
        index_add(zeros({hi - lo + 1}, grad.options()), 0, in_pos, ones({in_pos.numel()}, grad.options()));
    result = result / index_select(count, 0, in_pos);
  }
  return result.reshape(self.sizes());
}

TensorBase gather_backward(const TensorBase& grad, IntArrayRef self_sizes, int64_t dim, const TensorBase& index) {
  return scatter_add(zeros(self_sizes, grad.options()), dim, Tensor(index), Tensor(grad));
}

namespace {
// g zero-padded at the end of each dim to `sizes` (src larger than index: the elements no index
// reaches get a zero gradient).
Tensor pad_to(Tensor g, IntArrayRef sizes) {
  DimVector padded = g.sizes();
  for (size_t d = 0; d < padded.size() && d < sizes.size(); ++d) {
    if (padded[d] == sizes[d]) continue;
    const int64_t used = padded[d];
    padded[d] = sizes[d];
    g = slice_backward(g, padded, int64_t(d), 0, used, 1);
  }
  return g;
}
}  // namespace

TensorBase gather_to(const TensorBase& grad, int64_t dim, const TensorBase& index, IntArrayRef src_sizes) {
  return pad_to(gather(Tensor(grad), dim, Tensor(index)), src_sizes);
}

TensorBase index_select_backward(const TensorBase& grad, IntArrayRef self_sizes, int64_t dim, const TensorBase& index) {
  return index_add(zeros(self_sizes, grad.options()), dim, Tensor(index), Tensor(grad));
}

TensorBase index_select_to(const TensorBase& grad, int64_t dim, const TensorBase& index, IntArrayRef sizes) {
  return index_select(Tensor(grad), dim, Tensor(index)).reshape(sizes);
}

TensorBase index_add_source_backward(const TensorBase& grad, int64_t dim, const TensorBase& index,
                                     IntArrayRef source_sizes, const Scalar& alpha) {
  Tensor g = index_select(Tensor(grad), dim, Tensor(index)).reshape(source_sizes);
  if (alpha.is_complex())
    return g * Scalar(complex<double>(alpha.to<complex<double>>().re, -alpha.to<complex<double>>().im));
  return alpha.to_double() == 1.0 ? g : g * alpha;
}

TensorBase index_fill_value_backward(const TensorBase& grad_in, int64_t dim, const TensorBase& index) {
  const Tensor grad(grad_in);
  // Every filled place once, however often index names it.
  Tensor filled = index_fill(zeros(grad.sizes(), TensorOptions(kBool, grad.device())), dim, Tensor(index), true);
  return sum(where(filled, grad, zeros({}, grad.options())));
}

TensorBase take_backward(const TensorBase& grad, IntArrayRef self_sizes, const TensorBase& index) {
  return put(zeros(self_sizes, grad.options()), Tensor(index), Tensor(grad).reshape({-1}), /*accumulate=*/true);
}

TensorBase take_to(const TensorBase& grad, const TensorBase& index, IntArrayRef sizes) {
  return take(Tensor(grad), Tensor(index)).reshape(sizes);
}

TensorBase put_self_backward(const TensorBase& grad, const TensorBase& index, bool accumulate) {
  if (accumulate) return grad;
  return put(Tensor(grad), Tensor(index), zeros({index.numel()}, grad.options()), false);
}

TensorBase masked_select_backward(const TensorBase& grad, IntArrayRef self_sizes, const TensorBase& mask) {
  return masked_scatter(zeros(self_sizes, grad.options()), Tensor(mask), Tensor(grad));
}

TensorBase masked_scatter_source_backward(const TensorBase& grad, const TensorBase& mask, IntArrayRef source_sizes) {
  Tensor picked = masked_select(Tensor(grad), Tensor(mask));
  const int64_t n = numel_of(source_sizes);
  if (picked.numel() < n) picked = cat({picked, zeros({n - picked.numel()}, grad.options())});
  return picked.reshape(source_sizes);
}

std::tuple<TensorBase, TensorBase> scatter_reduce_backward(const TensorBase& grad_in, const TensorBase& self_in,
                                                           int64_t dim, const TensorBase& index_in,
                                                           const TensorBase& src_in, std::string_view reduce,
                                                           bool include_self, const TensorBase& result_in,
                                                           std::array<bool, 2> /*grad_input_mask*/) {
  const Tensor grad(grad_in), self(self_in), index(index_in), src(src_in), result(result_in);
  const Tensor zero = zeros({}, grad.options());
  Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = gather(grad, dim, index);
  } else if (reduce == "mean") {
    // Each place's count of values: its own (include_self) and the src values scattered there.
    Tensor count = include_self ? ones(self.sizes(), grad.options()) : zeros(self.sizes(), grad.options());
    count = scatter_add(count, dim, index, ones(src.sizes(), grad.options()));
    grad_self = grad / masked_fill(count, count == 0, 1);
    grad_src = gather(grad_self, dim, index);
  } else if (reduce == "amax" || reduce == "amin") {
    // The gradient is split evenly among the values equal to the result at their place.
    Tensor self_is = where(self == result, ones({}, grad.options()), zero);
    Tensor src_is = where(src == gather(result, dim, index), ones({}, grad.options()), zero);
    Tensor count = scatter_add(include_self ? self_is : zeros(self.sizes(), grad.options()), dim, index, src_is);
    Tensor share = grad / masked_fill(count, count == 0, 1);
    grad_self = self_is * share;
    grad_src = src_is * gather(share, dim, index);
  } else {  // prod: the product of the other values at each place, exact where values are zero
    Tensor masked_self = masked_fill(self, self == 0, 1);
    Tensor others_of_self = scatter_reduce(masked_self, dim, index, src, "prod", include_self) / masked_self;
    grad_self = grad * conj(others_of_self);
    Tensor src_zero = src == 0;
    Tensor zeros_at_place = gather(
        scatter_add(zeros(self.sizes(), grad.options()), dim, index, where(src_zero, ones({}, grad.options()), zero)),
        dim, index);
    Tensor single_zero = logical_and(src_zero, zeros_at_place == 1);
    Tensor without_zero = scatter_reduce(self, dim, index, masked_fill(src, single_zero, 1), "prod", include_self);
    grad_src = where(single_zero, gather(grad * conj(without_zero), dim, index),
                     gather(grad * conj(result), dim, index) / conj(masked_fill(src, src_zero, 1)));
  }
  if (!include_self) grad_self = scatter(grad_self, dim, index, 0);  // the places written lost self's value
  return {grad_self, pad_to(grad_src, src.sizes())};
}

}  // namespace kiln
