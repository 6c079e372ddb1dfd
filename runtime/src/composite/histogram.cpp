// torch.histogram (ops/searching.yaml: histogram.bin_ct and histogram.bins_tensor), PyTorch 1.13's
// CPU semantics over kiln ops, so it runs on every device those run on:
//  - the edges: linspace over range (or the data's [min, max], read to the host once; an empty
//    range is widened by 0.5 on both sides, as numpy's), or a copy of the bins tensor;
//  - the bin of each element: searchsorted (right=True) over the edges, which probes the same
//    places as PyTorch's std::upper_bound, so even unsorted edges give PyTorch's bins;
//  - the sums: _bincount of those bins (int64 counts, or the weights' sums in input order).
// PyTorch 1.13 skips an element only when x < edges[0] or x > edges[n], and puts x == edges[n] into
// the last bin. NaN is not skipped: its binary search over a bins tensor ends in the last bin, and
// bin_ct's interpolated guess (an integer cast of NaN) ends in bin 1 (bin 0 of a single bin).
// For sorted edges with a finite last edge kiln searches edges whose last one is raised by one ulp,
// with NaN replaced by an edge of its bin, so one search sorts every element into below (0), a bin
// or above (n + 1); other edges (unsorted, NaN or +inf among them) take PyTorch's mask, which sends
// the elements outside to 0, and the elements equal to the last edge join the last bin afterwards.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_bincount.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/aminmax.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/diff.h"
#include "kiln/gen/api/div.h"
#include "kiln/gen/api/gt.h"
#include "kiln/gen/api/logical_or.h"
#include "kiln/gen/api/lt.h"
#include "kiln/gen/api/nan_to_num.h"
#include "kiln/gen/api/searchsorted.h"
#include "kiln/gen/api/stack.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/where.h"

namespace kiln::composite {
namespace {

// The next value of `dtype` above v (finite v), as std::nextafter(v, inf) in that dtype.
double next_up(double v, DType dtype) {
  if (dtype == DType::Float64) return std::nextafter(v, INFINITY);
  if (dtype == DType::Float32) return double(std::nextafter(float(v), INFINITY));
  // bfloat16: the upper half of a float32's bits
  const float f = float(v);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  uint32_t b16 = bits >> 16;
  if (f == 0.0f) b16 = 0x0001;  // the smallest positive subnormal
  else if (f > 0.0f) b16 += 1;
  else b16 -= 1;
  bits = b16 << 16;
  float up;
  std::memcpy(&up, &bits, sizeof up);
  return double(up);
}

// Weight's checks, PyTorch's histogramdd_check_inputs for a 1-D histogram: self is seen as
// [numel, 1] and weight as [weight.numel()], so only the element counts must agree.
void check_weight(const char* op, const Tensor& self, const Tensor& weight) {
  if (!weight.defined()) return;
  KILN_CHECK(weight.dtype() == self.dtype(), DTypeError, op, "weight",
             "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same "
             "dtype, but got input(",
             dtype_name(self.dtype()), "), and weight(", dtype_name(weight.dtype()), ")");
  KILN_CHECK(weight.numel() == self.numel(), ShapeError, op, "weight",
             "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
             "excluding its innermost dimension, but got input with shape [",
             self.numel(), ", 1] and weight with shape [", weight.numel(), "]");
}

void check_bin_count(const char* op, int64_t bins) {
  KILN_CHECK(bins > 0, ValueError, op, "bins", "torch.histogram(): bins must be > 0, but got ", bins,
             " for dimension 0");
}

// hist of self (any shape) over the 1-D edges (n + 1 >= 2 of self's dtype, on self's device), in
// self's dtype; density divides by the total and by each bin's width. A NaN element is counted in
// bin nan_bin when the edges are sorted (see the top of the file).
Tensor histogram_over(const Tensor& self, const Tensor& edges, const Tensor& weight, bool density, int64_t nan_bin) {
  const int64_t n = edges.numel() - 1;
  const DType dtype = self.dtype();
  Tensor x = self.reshape({self.numel()});
  // _bincount sums float32 or float64 weights; bfloat16 ones are summed in float32 and rounded once.
  Tensor w;
  if (weight.defined()) {
    w = weight.reshape({weight.numel()});
    if (dtype == DType::BFloat16) w = w.to(DType::Float32);
  }
  // One read of the edges to the host (a sync on CUDA): are they sorted, is the last one finite?
  const std::vector<double> e = edges.to_vector<double>();
  bool sorted = true;
  for (int64_t i = 0; i < n; ++i) sorted = sorted && e[i] <= e[i + 1];  // false on NaN
  // int32 bins (half the memory traffic of int64) whenever they fit; _bincount takes either.
  const bool int32_bins = n + 2 <= int64_t(INT32_MAX);
  Tensor hist;
  if (sorted && std::isfinite(e[n])) {
    // NaN becomes an edge of its bin; x == e[n] falls below the raised last edge: bins 1..n are the
    // histogram's, 0 and n + 1 hold the elements outside.
    x = kiln::nan_to_num(x, e[nan_bin], INFINITY, -INFINITY);
    const Tensor raised = kiln::cat({edges.narrow(0, 0, n), kiln::full({1}, next_up(e[n], dtype), edges.options())});
    const Tensor bin = kiln::searchsorted(raised, x, int32_bins, /*right=*/true);
    hist = kiln::_bincount(bin, n + 2, w).narrow(0, 1, n);
  } else {
    const Tensor bin = kiln::searchsorted(edges, x, int32_bins, /*right=*/true);
    // PyTorch 1.13 skips x < edges[0] and x > edges[n] only, so NaN is inside: it searches to the end.
    const Tensor outside = kiln::logical_or(kiln::lt(x, edges.narrow(0, 0, 1).reshape({})),
                                            kiln::gt(x, edges.narrow(0, n, 1).reshape({})));
    // An element inside lands in 1..n + 1 (n + 1: equal to the last edge, or NaN); the rest go to 0.
    const Tensor counts = kiln::_bincount(kiln::where(outside, kiln::zeros({}, bin.options()), bin), n + 2, w);
    hist = kiln::cat({counts.narrow(0, 1, n - 1), kiln::add(counts.narrow(0, n, 1), counts.narrow(0, n + 1, 1))});
  }
  hist = hist.to(dtype);
  if (density) hist = kiln::div(kiln::div(hist, kiln::sum(hist)), kiln::diff(edges));
  return hist;
}

}  // namespace

std::tuple<Tensor, Tensor> histogram_bin_ct(const Tensor& self, int64_t bins, OptDoubleList range, const Tensor& weight,
                                            bool density) {
  constexpr const char* op = "histogram.bin_ct";
  check_bin_count(op, bins);
  // The outer edges: range, the data's extremes, or [0, 1] for an empty input (numpy's default).
  double lo = 0.0, hi = 1.0;
  if (range.has_value()) {
    KILN_CHECK(range.value().size() == 2, ValueError, op, "range",
               "torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, but got ",
               range.value().size());
    lo = (*range)[0];
    hi = (*range)[1];
  } else if (self.numel() > 0) {
    const auto [min_t, max_t] = kiln::aminmax(self);
    const std::vector<double> lohi = kiln::stack({min_t, max_t}).to_vector<double>();  // one read to the host
    lo = lohi[0];
    hi = lohi[1];
  }
  const char* arg = range.has_value() ? "range" : "self";
  KILN_CHECK(std::isfinite(lo) && std::isfinite(hi), ValueError, op, arg, "torch.histogramdd: dimension 0's range [",
             lo, ", ", hi, "] is not finite");
  KILN_CHECK(lo <= hi, ValueError, op, arg, "torch.histogramdd: min should not exceed max, but got min ", lo, " max ",
             hi, " for dimension 0");
  if (lo == hi) {  // an empty range is widened, as numpy's (and no bin has width 0 for density)
    lo -= 0.5;
    hi += 0.5;
  }
  check_weight(op, self, weight);
  const Tensor edges = kiln::linspace(lo, hi, bins + 1, TensorOptions(self.dtype(), self.device()));
  return {histogram_over(self, edges, weight, density, std::min<int64_t>(1, bins - 1)), edges};
}

std::tuple<Tensor, Tensor> histogram_bins_tensor(const Tensor& self, const Tensor& bins, const Tensor& weight,
                                                 bool density) {
  constexpr const char* op = "histogram.bins_tensor";
  KILN_CHECK(bins.dtype() == self.dtype(), DTypeError, op, "bins",
             "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype ",
             dtype_name(self.dtype()), " and bins for dimension 0 with dtype ", dtype_name(bins.dtype()));
  KILN_CHECK(bins.dim() == 1, ShapeError, op, "bins",
             "torch.histogramdd: bins tensor should have one dimension, but got ", bins.dim(),
             " dimensions in the bins tensor for dimension 0");
  KILN_CHECK(bins.numel() > 0, ValueError, op, "bins",
             "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor "
             "for dimension 0");
  check_weight(op, self, weight);
  check_bin_count(op, bins.numel() - 1);
  const Tensor edges = bins.clone();  // bin_edges is a copy of bins, as PyTorch's
  return {histogram_over(self, edges, weight, density, edges.numel() - 2), edges};
}

}  // namespace kiln::composite
