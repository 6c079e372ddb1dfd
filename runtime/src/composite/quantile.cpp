// quantile and nanquantile (PyTorch 1.13's quantile_compute and its messages): sort along the
// reduced dim, the rank q * (count - 1) of each q, then gather and lerp. Autograd records the
// parts (sort, gather and lerp have derivatives), so the gradient reaches self.
#include <string_view>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/all.h"
#include "kiln/gen/api/any.h"
#include "kiln/gen/api/ceil.h"
#include "kiln/gen/api/floor.h"
#include "kiln/gen/api/gather.h"
#include "kiln/gen/api/ge.h"
#include "kiln/gen/api/isnan.h"
#include "kiln/gen/api/le.h"
#include "kiln/gen/api/lerp.h"
#include "kiln/gen/api/logical_and.h"
#include "kiln/gen/api/logical_not.h"
#include "kiln/gen/api/lt.h"
#include "kiln/gen/api/masked_fill.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/round.h"
#include "kiln/gen/api/sort.h"
#include "kiln/gen/api/sub.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/where.h"

namespace kiln::composite {
namespace {

enum class Interpolation { Linear, Lower, Higher, Midpoint, Nearest };

Interpolation parse_interpolation(std::string_view s, const char* op) {
  if (s == "linear") return Interpolation::Linear;
  if (s == "lower") return Interpolation::Lower;
  if (s == "higher") return Interpolation::Higher;
  if (s == "midpoint") return Interpolation::Midpoint;
  if (s == "nearest") return Interpolation::Nearest;
  KILN_FAIL(ValueError, op, "interpolation",
            "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got ", s);
}

// The result's sizes without q's dim: dim removed (kept as 1 with keepdim), or all reduced.
std::vector<int64_t> reduced_sizes(const Tensor& self, std::optional<int64_t> dim, bool keepdim, int64_t d) {
  std::vector<int64_t> sizes;
  if (dim && self.dim() > 0) {
    sizes.assign(self.sizes().begin(), self.sizes().end());
    if (keepdim) sizes[d] = 1;
    else sizes.erase(sizes.begin() + d);
  } else if (keepdim) {
    sizes.assign(size_t(self.dim()), 1);
  }
  return sizes;
}

Tensor quantile_impl(const char* op, const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan) {
  const Interpolation mode = parse_interpolation(interpolation, op);
  KILN_CHECK(self.numel() > 0, ValueError, op, "self", "quantile() input tensor must be non-empty");
  KILN_CHECK(q.dim() <= 1, ShapeError, op, "q", "quantile() q must be a scalar or 1D tensor");
  KILN_CHECK(self.dtype() == DType::Float32 || self.dtype() == DType::Float64, DTypeError, op, "self",
             "quantile() input tensor must be either float or double dtype");
  KILN_CHECK(q.dtype() == self.dtype(), DTypeError, op, "q",
             "quantile() q tensor must be same dtype as the input tensor");
  KILN_CHECK(q.device() == self.device(), DeviceError, op, "q",
             "quantile() q tensor must be on the same device as the input tensor");
  if (self.is_cpu())  // as PyTorch: checked on the CPU only, to spare an accelerator the sync
    KILN_CHECK(kiln::all(kiln::logical_and(kiln::ge(q, 0), kiln::le(q, 1))).item<bool>(), ValueError, op, "q",
               "quantile() q values must be in the range [0, 1]");
  const int64_t d = wrap_dim(dim.value_or(0), self.dim() > 0 ? self.dim() : 1, op);

  // sorted lines [reduced sizes..., n]
  std::vector<int64_t> line_sizes = reduced_sizes(self, dim, keepdim, d);
  Tensor sorted;
  if (!dim || self.dim() == 0) {
    sorted = std::get<0>(kiln::sort(self.reshape({-1}), 0, false));
  } else {
    sorted = std::get<0>(kiln::sort(self.movedim(d, -1), -1, false));
  }
  const int64_t n = sorted.size(-1);
  line_sizes.push_back(n);
  sorted = sorted.reshape(line_sizes);

  // ranks [reduced sizes..., Q]; a line with NaN reads its last element (NaN)
  const Tensor q_line = q.reshape({-1});
  Tensor ranks;
  if (ignore_nan) {
    const Tensor valid = kiln::sum(kiln::logical_not(kiln::isnan(sorted)), {-1}, true);
    ranks = kiln::mul(q_line, kiln::sub(valid, 1));
    ranks = kiln::masked_fill(ranks, kiln::lt(ranks, 0), 0);
  } else {
    const Tensor has_nan = kiln::any(kiln::isnan(sorted), -1, true);
    const Tensor last = kiln::scalar_tensor(n - 1, q.options());
    ranks = kiln::where(has_nan, last, kiln::mul(q_line, n - 1));
  }
  if (mode == Interpolation::Lower) ranks = kiln::floor(ranks);
  if (mode == Interpolation::Higher) ranks = kiln::ceil(ranks);
  if (mode == Interpolation::Nearest) ranks = kiln::round(ranks);  // half to even, as PyTorch

  const Tensor ranks_below = ranks.to(DType::Int64);
  Tensor values = kiln::gather(sorted, -1, ranks_below);
  if (mode == Interpolation::Linear || mode == Interpolation::Midpoint) {
    const Tensor weights =
        mode == Interpolation::Midpoint ? kiln::full_like(ranks, 0.5) : kiln::sub(ranks, ranks_below.to(ranks.dtype()));
    const Tensor values_above = kiln::gather(sorted, -1, kiln::ceil(ranks).to(DType::Int64));
    values = kiln::lerp(values, values_above, weights);
  }
  return q.dim() == 0 ? values.squeeze(-1) : values.movedim(-1, 0);
}

}  // namespace

Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl("quantile", self, q, dim, keepdim, interpolation, false);
}

Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  KILN_CHECK(q >= 0 && q <= 1, ValueError, "quantile", "q", "quantile() q must be in the range [0, 1] but got ", q);
  return quantile_impl("quantile", self, kiln::scalar_tensor(q, self.options()), dim, keepdim, interpolation, false);
}

Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl("nanquantile", self, q, dim, keepdim, interpolation, true);
}

Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  KILN_CHECK(q >= 0 && q <= 1, ValueError, "nanquantile", "q", "quantile() q must be in the range [0, 1] but got ", q);
  return quantile_impl("nanquantile", self, kiln::scalar_tensor(q, self.options()), dim, keepdim, interpolation, true);
}

}  // namespace kiln::composite
