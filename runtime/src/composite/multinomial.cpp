// multinomial: indices drawn from rows of non-negative weights, as torch.multinomial. With
// replacement each draw inverts the row's running sum at a uniform point; without, a row's
// indices are ordered by E_i / w_i (E_i exponential draws), whose first k are distributed as k
// draws one after another, each from the weights left (the exponential-race view of sampling
// without replacement). CPU only: the CUDA version needs the device sort the sorting family
// brings, and says so.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include "kiln/op_support.h"
#include "kiln/gen/composite.h"
#include "kiln/random.h"
#include "kiln/device_hooks.h"
#include "kiln/gen/api/multinomial.h"

namespace kiln::composite {
namespace {

constexpr const char* kOp = "multinomial";

// The rows' weights in float64, checked as PyTorch checks them.
std::vector<double> checked_weights(const Tensor& self, int64_t rows, int64_t k, int64_t num_samples,
                                    bool replacement) {
  std::vector<double> w = self.detach().contiguous().to_vector<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double v = w[size_t(r * k + i)];
      KILN_CHECK(std::isfinite(v) && v >= 0, ValueError, kOp, "self",
                 "probability tensor contains either inf, nan or element < 0 (row ", r, ", index ", i, ": ", v, ")");
      total += v;
      nonzero += v > 0;
    }
    KILN_CHECK(total > 0, ValueError, kOp, "self",
               "invalid multinomial distribution (sum of probabilities <= 0) in row ", r);
    KILN_CHECK(replacement || nonzero >= num_samples, ValueError, kOp, "num_samples",
               "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)",
               ": row ", r, " has ", nonzero, " nonzero weights for ", num_samples, " samples");
  }
  return w;
}

// out[j] = the index whose slice of the running sum holds u[j] * total; a zero weight's slice is
// empty, so it is never drawn.
void draw_with_replacement(const double* w, int64_t k, const double* u, int64_t n, int64_t* out) {
  std::vector<double> cdf(static_cast<size_t>(k));
  std::partial_sum(w, w + k, cdf.begin());
  const double total = cdf.back();
  int64_t last = k - 1;
  while (w[last] == 0) --last;  // rounding may put u * total at the very end
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = std::upper_bound(cdf.begin(), cdf.end(), u[j] * total) - cdf.begin();
    out[j] = std::min(i, last);
  }
}

// The n smallest E_i / w_i in increasing order (E_i = -log(1 - u_i)); zero weights never come up.
void draw_without_replacement(const double* w, int64_t k, const double* u, int64_t n, int64_t* out) {
  std::vector<double> key(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i)
    key[size_t(i)] = w[i] > 0 ? -std::log1p(-u[i]) / w[i] : std::numeric_limits<double>::infinity();
  std::vector<int64_t> order(static_cast<size_t>(k));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int64_t a, int64_t b) {
    return key[size_t(a)] != key[size_t(b)] ? key[size_t(a)] < key[size_t(b)] : a < b;
  });
  std::copy(order.begin(), order.begin() + n, out);
}

}  // namespace

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, Generator* gen) {
  KILN_CHECK(self.defined(), ValueError, kOp, "self", "undefined tensor");
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, ShapeError, kOp, "self", "prob_dist must be 1 or 2 dim, got ",
             self.dim(), " dims");
  KILN_CHECK(is_floating(self.dtype()), DTypeError, kOp, "self", "expected a floating point tensor, got ",
             dtype_name(self.dtype()));
  KILN_CHECK(num_samples > 0, ValueError, kOp, "num_samples", "cannot sample n_sample <= 0 samples, got ", num_samples);
  const int64_t k = self.size(-1), rows = self.dim() == 2 ? self.size(0) : 1;
  KILN_CHECK(k > 0, ValueError, kOp, "self", "expected at least one category, got size ", shape_str(self.sizes()));
  KILN_CHECK(k <= (int64_t(1) << 24), ValueError, kOp, "self", "number of categories cannot exceed 2^24, got ", k);
  KILN_CHECK(replacement || num_samples <= k, ValueError, kOp, "num_samples",
             "cannot sample n_sample > prob_dist.size(-1) samples without replacement (", num_samples, " > ", k, ")");
  KILN_CHECK(self.is_cpu(), NotImplementedError, kOp, "self", "multinomial on ", self.device().str(),
             " is not implemented yet (it waits for the sorting ops' device sort); draw on the CPU, then move");
  const std::vector<double> w = checked_weights(self, rows, k, num_samples, replacement);

  const int64_t per_row = replacement ? num_samples : k;  // uniform draws a row uses
  Tensor uniforms = kiln::empty({rows * per_row}, TensorOptions(DType::Float64));
  auto* u = static_cast<double*>(uniforms.data_ptr());
  device_hooks(DeviceType::CPU, kOp).uniform_fill(uniforms, 0.0, 1.0, gen ? *gen : default_generator());
  const std::vector<int64_t> shape =
      self.dim() == 2 ? std::vector<int64_t>{rows, num_samples} : std::vector<int64_t>{num_samples};
  Tensor out = kiln::empty(shape, TensorOptions(DType::Int64));
  auto* idx = static_cast<int64_t*>(out.data_ptr());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = w.data() + r * k;
    if (replacement) draw_with_replacement(row, k, u + r * per_row, num_samples, idx + r * num_samples);
    else draw_without_replacement(row, k, u + r * per_row, num_samples, idx + r * num_samples);
  }
  return out;
}

}  // namespace kiln::composite
