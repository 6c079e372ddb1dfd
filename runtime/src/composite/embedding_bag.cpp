// embedding_bag: sums, means or maxima of bags of embedding rows without materialising the
// per-bag lookups' [bags, max bag, dim] tensor. Built from indexing ops, so its gradient is
// theirs and deterministic: the rows come from embedding() (padding_idx's row gets no gradient,
// scale_grad_by_freq divides by each index's count) and are summed into their bags by
// index_add; a max picks each bag's row per feature with gather. offset2bag is found on the
// device (a cumulative count of the bag starts), so nothing is read back but the checks' values.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cumsum.h"
#include "kiln/gen/api/embedding.h"
#include "kiln/gen/api/gather.h"
#include "kiln/gen/api/index_add.h"
#include "kiln/gen/api/index_select.h"
#include "kiln/gen/api/nonzero.h"
#include "kiln/gen/api/scatter_reduce.h"
#include "kiln/gen/api/where.h"

namespace kiln::composite {
namespace {

constexpr const char* kOp = "embedding_bag";
enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

void check_arguments(const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
                     int64_t mode, bool sparse, const Tensor& per_sample_weights, bool include_last_offset) {
  KILN_CHECK(weight.dim() == 2, ShapeError, kOp, "weight", "weight has to be a 2D Tensor, but got Tensor of dimension ",
             weight.dim());
  KILN_CHECK(indices.dim() == 1, ShapeError, kOp, "indices",
             "input has to be a 1D Tensor, but got Tensor of dimension ", indices.dim());
  KILN_CHECK(offsets.dim() == 1, ShapeError, kOp, "offsets",
             "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"indices", indices}, {"offsets", offsets}})
    KILN_CHECK(t.dtype() == kInt64 || t.dtype() == kInt32, DTypeError, kOp, name, "expected ", name,
               " to be int64 or int32, got ", dtype_name(t.dtype()));
  KILN_CHECK(indices.dtype() == offsets.dtype(), DTypeError, kOp, "offsets",
             "expected input and offsets to have the same dtype, got ", dtype_name(indices.dtype()), " and ",
             dtype_name(offsets.dtype()));
  KILN_CHECK(mode >= kSum && mode <= kMax, ValueError, kOp, "mode", "mode must be 0 (sum), 1 (mean) or 2 (max), got ",
             mode);
  KILN_CHECK(!sparse, NotImplementedError, kOp, "sparse",
             "sparse gradients are not supported (kiln has no sparse tensors)");
  KILN_CHECK(!(scale_grad_by_freq && mode == kMax), ValueError, kOp, "scale_grad_by_freq",
             "max mode does not support scaling the gradient by the frequency");
  if (per_sample_weights.defined()) {
    KILN_CHECK(
        mode == kSum, ValueError, kOp, "per_sample_weights",
        "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got "
        "mode='",
        mode == kMean ? "mean" : "max", "')");
    KILN_CHECK(per_sample_weights.sizes().equals(indices.sizes()), ShapeError, kOp, "per_sample_weights",
               "expected per_sample_weights to be 1D with the same number of elements as input, got ",
               shape_str(per_sample_weights.sizes()), " for input ", shape_str(indices.sizes()));
    KILN_CHECK(per_sample_weights.dtype() == weight.dtype(), DTypeError, kOp, "per_sample_weights",
               "expected per_sample_weights to have the dtype of weight (", dtype_name(weight.dtype()), "), got ",
               dtype_name(per_sample_weights.dtype()));
  }
  const int64_t bags = offsets.numel() - (include_last_offset ? 1 : 0);
  KILN_CHECK(bags >= (include_last_offset ? 0 : 1) && offsets.numel() >= 1, ShapeError, kOp, "offsets",
             "offsets must hold at least one bag start", include_last_offset ? " and the end" : "");
  // the values: one read back of the offsets and of the indices' range
  NoGradGuard no_grad;
  const std::vector<int64_t> starts = offsets.to(kInt64).to(kCPU).to_vector<int64_t>();
  const int64_t n = indices.numel();
  KILN_CHECK(
      starts[0] == 0, ValueError, kOp, "offsets",
      "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, "
      "got ",
      starts[0]);
  for (size_t b = 1; b < starts.size(); ++b)
    KILN_CHECK(starts[b] >= starts[b - 1], ValueError, kOp, "offsets", "offsets must be non-decreasing, but offsets[",
               b, "] = ", starts[b], " < offsets[", b - 1, "] = ", starts[b - 1]);
  KILN_CHECK(starts.back() <= n, IndexError, kOp, "offsets", "offsets[", starts.size() - 1, "] = ", starts.back(),
             " is past the end of input (", n, " indices)");
  KILN_CHECK(!include_last_offset || starts.back() == n, ValueError, kOp, "offsets",
             "with include_last_offset, the last offset must equal the number of indices (", n, "), got ",
             starts.back());
  if (n > 0) {
    const Tensor wide = indices.to(kInt64);
    const int64_t lo = wide.min().item<int64_t>(), hi = wide.max().item<int64_t>();
    KILN_CHECK(lo >= 0 && hi < weight.size(0), IndexError, kOp, "indices", "index ", lo < 0 ? lo : hi,
               " is out of range for ", weight.size(0), " embeddings");
  }
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_padding_idx(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
    bool sparse, const Tensor& per_sample_weights, bool include_last_offset, std::optional<int64_t> padding_idx) {
  check_arguments(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset);
  const int64_t rows = weight.size(0), dim = weight.size(1), n = indices.numel();
  int64_t pad = padding_idx.value_or(-1);
  if (padding_idx) {
    KILN_CHECK(pad >= -rows && pad < rows, IndexError, kOp, "padding_idx",
               "padding_idx must be within the number of embeddings (", rows, "), got ", pad);
    if (pad < 0) pad += rows;
  }
  const TensorOptions index_options(kInt64, weight.device()), value_options(weight.dtype(), weight.device());
  const Tensor index = indices.to(kInt64);
  const int64_t bags = offsets.numel() - (include_last_offset ? 1 : 0);
  // offset2bag[i]: how many bag starts after the first are at or before i
  Tensor starts = offsets.to(kInt64).slice(0, 1, bags);
  starts = starts.index_select(0, kiln::nonzero(starts.lt(n)).flatten());  // trailing empty bags start at n
  const Tensor offset2bag = kiln::zeros({n}, index_options).index_add(0, starts, ones_like(starts)).cumsum(0);
  const Tensor kept = padding_idx ? index.ne(pad) : kiln::ones({n}, TensorOptions(kBool, weight.device()));
  const Tensor bag_size = kiln::zeros({bags}, index_options).index_add(0, offset2bag, kept.to(kInt64));

  if (mode == kMax) {
    Tensor max_indices;
    {
      NoGradGuard no_grad;
      // each bag's maximum per feature over its kept rows, then the first row holding it
      Tensor values = weight.detach().index_select(0, index);
      values = kiln::where(kept.unsqueeze(1), values, kiln::full({}, -INFINITY, value_options));
      const Tensor bag_of = offset2bag.unsqueeze(1).expand({n, dim});
      const Tensor peak = kiln::scatter_reduce(kiln::full({bags, dim}, -INFINITY, value_options), 0, bag_of, values,
                                               "amax", /*include_self=*/true);
      const Tensor at_peak = values.eq(peak.index_select(0, offset2bag)).logical_and(kept.unsqueeze(1));
      const Tensor position =
          kiln::where(at_peak, kiln::arange(n, index_options).unsqueeze(1), kiln::full({}, n, index_options));
      const Tensor first = kiln::scatter_reduce(kiln::full({bags, dim}, n, index_options), 0, bag_of, position, "amin",
                                                /*include_self=*/true);
      // an empty bag (or one of padding only) points at row 0 and outputs zeros, as PyTorch's CPU kernel
      const Tensor found = first.lt(n);
      max_indices =
          kiln::where(found, index.index_select(0, first.clamp(std::nullopt, n - 1).flatten()).reshape({bags, dim}),
                      kiln::zeros({}, index_options));
    }
    const Tensor picked = kiln::gather(weight, 0, max_indices);
    const Tensor output = kiln::where(bag_size.gt(0).unsqueeze(1), picked, kiln::zeros({}, value_options));
    return {output, offset2bag, bag_size, max_indices};
  }
  Tensor looked_up = kiln::embedding(weight, index, padding_idx ? pad : -1, scale_grad_by_freq);
  if (per_sample_weights.defined()) looked_up = looked_up * per_sample_weights.unsqueeze(1);
  if (padding_idx) looked_up = looked_up * kept.unsqueeze(1).to(weight.dtype());
  Tensor output = kiln::zeros({bags, dim}, value_options).index_add(0, offset2bag, looked_up);
  if (mode == kMean) output = output / bag_size.clamp(int64_t(1), std::nullopt).unsqueeze(1).to(weight.dtype());
  return {output, offset2bag, bag_size, bag_size};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const Tensor& per_sample_weights,
                                                         bool include_last_offset) {
  return embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                   include_last_offset, std::nullopt);
}

}  // namespace kiln::composite
