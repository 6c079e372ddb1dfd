// The search and histogram ops' meta steps (see kiln/meta/searching.h).
#include "kiln/meta/searching.h"

#include <cmath>
#include "kiln/pointwise.h"

namespace kiln::meta {
namespace {

void check_searchable(const char* op, const char* arg, const TensorBase& t) {
  KILN_CHECK(t.dtype() != DType::Bool && !is_complex(t.dtype()), DTypeError, op, arg,
             "torch.searchsorted(): not implemented for '", dtype_name(t.dtype()), "'");
}

// The shared part of searchsorted and bucketize: the values against a 1-D sequence or, with
// matching leading dims, one row of the sequence per row of values.
SearchPlan search_plan(const char* op, const TensorBase& seq, const char* seq_arg, const TensorBase& values,
                       const char* values_arg, bool out_int32, bool right) {
  check_searchable(op, seq_arg, seq);
  check_searchable(op, values_arg, values);
  KILN_CHECK(values.dim() > 0 || seq.dim() == 1, ShapeError, op, values_arg,
             "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we "
             "got boundaries tensor dim(",
             seq.dim(), ") and input value's dim(", values.dim(), ") numel(", values.numel(), ")");
  KILN_CHECK(seq.dim() != 0, ShapeError, op, seq_arg,
             "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  bool leading_match = seq.dim() == values.dim();
  for (int64_t d = 0; leading_match && d + 1 < seq.dim(); ++d) leading_match = seq.size(d) == values.size(d);
  KILN_CHECK(seq.dim() == 1 || leading_match, ShapeError, op, seq_arg,
             "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
             "tensor and input value tensor must match, but we got boundaries tensor ",
             shape_str(seq.sizes()), " and input value tensor ", shape_str(values.sizes()));
  SearchPlan plan;
  plan.sizes = values.sizes();
  plan.dtype = out_int32 ? DType::Int32 : DType::Int64;
  plan.compare_dtype = pointwise::result_type({&seq, &values});
  if (seq.dim() == 1) {  // one row, shared by every value
    plan.row_len = seq.size(0);
    plan.per_row = values.numel();
  } else {  // a row per row of values
    plan.row_len = seq.size(seq.dim() - 1);
    plan.rows = numel_of(IntArrayRef(seq.sizes().data(), size_t(seq.dim() - 1)));
    plan.per_row = values.size(values.dim() - 1);
  }
  plan.right = right;
  return plan;
}

}  // namespace

SearchPlan searchsorted(const char* op, const TensorBase& sorted_sequence, const TensorBase& self, bool out_int32,
                        bool right, std::optional<std::string_view> side, const TensorBase& sorter) {
  if (side) {
    KILN_CHECK(*side == "left" || *side == "right", ValueError, op, "side",
               "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    KILN_CHECK(!right || *side == "right", ValueError, op, "right",
               "torch.searchsorted(): side and right can't be set to opposites, got side of ", *side,
               " while right was True");
  }
  if (sorter.defined()) {
    KILN_CHECK(sorter.device() == sorted_sequence.device(), DeviceError, op, "sorter",
               "torch.searchsorted(): sorter and boundary tensors should have same device type, but got sorter ",
               "tensor device type ", sorter.device().str(), " and boundary tensor device type ",
               sorted_sequence.device().str());
    KILN_CHECK(sorter.sizes().equals(sorted_sequence.sizes()), ShapeError, op, "sorter",
               "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
               shape_str(sorted_sequence.sizes()), "and got sorter tensor ", shape_str(sorter.sizes()));
    KILN_CHECK(sorter.dtype() == DType::Int64, DTypeError, op, "sorter",
               "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
               dtype_name(sorter.dtype()));
  }
  return search_plan(op, sorted_sequence, "sorted_sequence", self, "self", out_int32,
                     right || (side && *side == "right"));
}

SearchPlan bucketize(const char* op, const TensorBase& self, const TensorBase& boundaries, bool out_int32, bool right) {
  KILN_CHECK(boundaries.dim() == 1, ShapeError, op, "boundaries", "boundaries tensor must be 1 dimension, but got dim(",
             boundaries.dim(), ")");
  return search_plan(op, boundaries, "boundaries", self, "self", out_int32, right);
}

void histc_range_from_data(const char* op, bool empty, double data_min, double data_max, double* lo, double* hi) {
  double l = empty ? 0.0 : data_min, h = empty ? 0.0 : data_max;
  if (l == h) l -= 1, h += 1;
  KILN_CHECK(std::isfinite(l) && std::isfinite(h), ValueError, op, "self", "torch.histc: range of [", l, ", ", h,
             "] is not finite");
  KILN_CHECK(l < h, ValueError, op, "max", "torch.histc: max must be larger than min");
  *lo = l;
  *hi = h;
}

HistcPlan histc(const char* op, const TensorBase& self, int64_t bins, const Scalar& min, const Scalar& max) {
  KILN_CHECK(bins > 0, ValueError, op, "bins", "torch.histogram(): bins must be > 0, but got ", bins,
             " for dimension 0");
  HistcPlan plan;
  plan.bins = bins;
  plan.sizes = {bins};
  plan.dtype = self.dtype();
  const double lo = min.to<double>(), hi = max.to<double>();
  if (lo == hi && self.numel() > 0) {
    plan.from_data = true;  // the kernel reads the extremes
    return plan;
  }
  double l = lo, h = hi;
  if (l == h) l -= 1, h += 1;
  KILN_CHECK(std::isfinite(l) && std::isfinite(h), ValueError, op, std::isfinite(l) ? "max" : "min",
             "torch.histc: range of [", l, ", ", h, "] is not finite");
  KILN_CHECK(l < h, ValueError, op, "max", "torch.histc: max must be larger than min");
  plan.lo = l;
  plan.hi = h;
  return plan;
}

BincountPlan bincount(const char* op, const TensorBase& self, int64_t length, const TensorBase& weights) {
  KILN_CHECK(self.dim() == 1, ShapeError, op, "self", "bincount only supports 1-d non-negative integral inputs.");
  KILN_CHECK(length >= 0, ValueError, op, "length", "length should be >= 0, got ", length);
  BincountPlan plan;
  plan.length = length;
  plan.sizes = {length};
  if (weights.defined()) {
    KILN_CHECK(weights.dim() == 1 && weights.size(0) == self.size(0), ShapeError, op, "weights",
               "weights should be 1-d and have the same length as input");
    KILN_CHECK(weights.dtype() == DType::Float32 || weights.dtype() == DType::Float64, DTypeError, op, "weights",
               "expected float32 or float64 weights (bincount casts others to float64), got ",
               dtype_name(weights.dtype()));
    plan.dtype = weights.dtype();
  }
  return plan;
}

}  // namespace kiln::meta
