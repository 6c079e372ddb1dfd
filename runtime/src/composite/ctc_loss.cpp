// ctc_loss (connectionist temporal classification) on the host, in float64: the forward
// (alpha) recursion for the loss, alpha and beta for its gradient (_ctc_loss_grad). The
// gradient is the true derivative with respect to log_probs, -occupancy(t, c); PyTorch's adds
// exp(log_probs) (it assumes log_probs came out of log_softmax, through which both give the
// same gradient of the logits), so a leaf log_probs gets a different gradient there.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_ctc_loss_grad.h"
#include "kiln/gen/api/ctc_loss.h"
#include "loss_support.h"

namespace kiln::composite {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

// The checked arguments: log_probs [T, N, C] (or [T, C], one unbatched sample) as float64 on the
// host, and each sample's labels.
struct Ctc {
  int64_t T = 0, N = 1, C = 0, blank = 0;
  bool batched = true;
  std::vector<double> lp;  // [T, N, C]
  std::vector<int64_t> input_len;
  std::vector<std::vector<int64_t>> labels;
  double at(int64_t t, int64_t n, int64_t c) const { return lp[size_t((t * N + n) * C + c)]; }
  // The extended label sequence l' = blank, l1, blank, l2, ..., blank.
  int64_t ext(int64_t n, int64_t s) const { return s % 2 == 0 ? blank : labels[size_t(n)][size_t(s / 2)]; }
};

Ctc read_ctc(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
             int64_t blank) {
  const char* op = "ctc_loss";
  KILN_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2, ShapeError, op, "log_probs",
             "expected a 3-D [T, N, C] or 2-D [T, C] tensor, got ", shape_str(log_probs.sizes()));
  KILN_CHECK(targets.dtype() == DType::Int64 || targets.dtype() == DType::Int32, DTypeError, op, "targets",
             "Expected tensor for argument #2 'targets' to have one of the following scalar types: Long, Int; but got ",
             dtype_name(targets.dtype()));
  Ctc p;
  p.batched = log_probs.dim() == 3;
  p.T = log_probs.size(0);
  p.N = p.batched ? log_probs.size(1) : 1;
  p.C = log_probs.size(log_probs.dim() - 1);
  p.blank = blank;
  KILN_CHECK(blank >= 0 && blank < p.C, ValueError, op, "blank", "blank must be in label range");
  KILN_CHECK(int64_t(input_lengths.size()) == p.N, ShapeError, op, "input_lengths",
             "input_lengths must be of size batch_size");
  KILN_CHECK(int64_t(target_lengths.size()) == p.N, ShapeError, op, "target_lengths",
             "target_lengths must be of size batch_size");
  const std::vector<int64_t> tv = targets.to_vector<int64_t>();
  // Targets are padded rows [N, S] or, for a batch, all sequences one after another.
  KILN_CHECK(targets.dim() == 1 || (p.batched && targets.dim() == 2), ShapeError, op, "targets",
             "expected padded targets [N, S] or concatenated ones [sum(target_lengths)], got ",
             shape_str(targets.sizes()));
  const bool padded = !p.batched || targets.dim() == 2;
  int64_t offset = 0;
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t il = input_lengths[size_t(n)], tl = target_lengths[size_t(n)];
    KILN_CHECK(il >= 0 && il <= p.T, ValueError, op, "input_lengths", "Expected input_lengths to have value at most ",
               p.T, ", but got value ", il);
    KILN_CHECK(tl >= 0, ValueError, op, "target_lengths", "Expected target_lengths to be non-negative, got ", tl);
    const int64_t row = padded ? targets.size(targets.dim() - 1) : 0;
    if (padded)
      KILN_CHECK(tl <= row, ShapeError, op, "targets", "Expected tensor to have size at least ", tl,
                 " at dimension 1, but got size ", row, " for argument #2 'targets'");
    const int64_t start = padded ? n * row : offset;
    KILN_CHECK(start + tl <= int64_t(tv.size()), ShapeError, op, "targets", "expected at least ", start + tl,
               " target values, got ", tv.size());
    std::vector<int64_t> l(tv.begin() + start, tv.begin() + start + tl);
    for (int64_t c : l)
      KILN_CHECK(c >= 0 && c < p.C && c != blank, IndexError, op, "targets", "target ", c, " is not a label in [0, ",
                 p.C, ") other than blank ", blank);
    p.labels.push_back(std::move(l));
    p.input_len.push_back(il);
    offset += tl;
  }
  p.lp = log_probs.to_vector<double>();
  return p;
}

// log alpha [T, S] of sample n and its negative log-likelihood (inf when no path fits).
double forward(const Ctc& p, int64_t n, std::vector<double>& alpha) {
  const int64_t T = p.input_len[size_t(n)], S = 2 * int64_t(p.labels[size_t(n)].size()) + 1;
  alpha.assign(size_t(std::max<int64_t>(T, 1) * S), kNegInf);
  if (T == 0) return S == 1 ? 0.0 : std::numeric_limits<double>::infinity();
  alpha[0] = p.at(0, n, p.blank);
  if (S > 1) alpha[1] = p.at(0, n, p.ext(n, 1));
  for (int64_t t = 1; t < T; ++t)
    for (int64_t s = 0; s < S; ++s) {
      double a = alpha[size_t((t - 1) * S + s)];
      if (s > 0) a = log_add(a, alpha[size_t((t - 1) * S + s - 1)]);
      if (s > 1 && p.ext(n, s) != p.blank && p.ext(n, s) != p.ext(n, s - 2))
        a = log_add(a, alpha[size_t((t - 1) * S + s - 2)]);
      alpha[size_t(t * S + s)] = a == kNegInf ? kNegInf : a + p.at(t, n, p.ext(n, s));
    }
  double ll = alpha[size_t((T - 1) * S + S - 1)];
  if (S > 1) ll = log_add(ll, alpha[size_t((T - 1) * S + S - 2)]);
  return -ll;
}

// d nll / d log_probs[t, n, :] += scale * -occupancy: the share of the paths through (t, c).
void backward(const Ctc& p, int64_t n, const std::vector<double>& alpha, double nll, double scale,
              std::vector<double>& grad) {
  const int64_t T = p.input_len[size_t(n)], S = 2 * int64_t(p.labels[size_t(n)].size()) + 1;
  if (T == 0 || std::isinf(nll)) return;
  std::vector<double> beta(size_t(T * S), kNegInf);
  beta[size_t((T - 1) * S + S - 1)] = p.at(T - 1, n, p.ext(n, S - 1));
  if (S > 1) beta[size_t((T - 1) * S + S - 2)] = p.at(T - 1, n, p.ext(n, S - 2));
  for (int64_t t = T - 2; t >= 0; --t)
    for (int64_t s = 0; s < S; ++s) {
      double b = beta[size_t((t + 1) * S + s)];
      if (s + 1 < S) b = log_add(b, beta[size_t((t + 1) * S + s + 1)]);
      if (s + 2 < S && p.ext(n, s + 2) != p.blank && p.ext(n, s + 2) != p.ext(n, s))
        b = log_add(b, beta[size_t((t + 1) * S + s + 2)]);
      beta[size_t(t * S + s)] = b == kNegInf ? kNegInf : b + p.at(t, n, p.ext(n, s));
    }
  std::vector<double> lcab(size_t(p.C));
  for (int64_t t = 0; t < T; ++t) {
    std::fill(lcab.begin(), lcab.end(), kNegInf);
    for (int64_t s = 0; s < S; ++s) {
      const size_t c = size_t(p.ext(n, s));
      lcab[c] = log_add(lcab[c], alpha[size_t(t * S + s)] + beta[size_t(t * S + s)]);
    }
    // alpha and beta both hold the emission at t: divide it out once.
    for (int64_t c = 0; c < p.C; ++c)
      if (lcab[size_t(c)] != kNegInf)
        grad[size_t((t * p.N + n) * p.C + c)] -= scale * std::exp(lcab[size_t(c)] + nll - p.at(t, n, c));
  }
}

// Each sample's share of the reduced loss: 1 (none, sum) or 1 / (N * max(target_length, 1)) (mean).
double sample_scale(const Ctc& p, int64_t n, int64_t reduction) {
  if (reduction != 1) return 1.0;
  return 1.0 / double(p.N) / double(std::max<int64_t>(1, int64_t(p.labels[size_t(n)].size())));
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank, int64_t reduction, bool zero_infinity) {
  loss::check_reduction("ctc_loss", reduction);
  const Ctc p = read_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  std::vector<double> losses(size_t(p.N)), alpha;
  double total = 0;
  for (int64_t n = 0; n < p.N; ++n) {
    double nll = forward(p, n, alpha);
    if (zero_infinity && std::isinf(nll)) nll = 0;
    losses[size_t(n)] = nll;
    total += nll * sample_scale(p, n, reduction);
  }
  if (reduction != 0) return from_vector(std::vector<double>{total}, {}).to(log_probs.dtype());
  DimVector shape;
  if (p.batched) shape.push_back(p.N);
  return from_vector(losses, shape).to(log_probs.dtype());
}

Tensor ctc_loss_tensor(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  const std::vector<int64_t> il = input_lengths.to_vector<int64_t>(), tl = target_lengths.to_vector<int64_t>();
  return kiln::ctc_loss(log_probs, targets, il, tl, blank, reduction, zero_infinity);
}

Tensor ctc_loss_grad(const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  const Ctc p = read_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const std::vector<double> g = grad.to_vector<double>();  // 0-d (mean, sum) or one per sample
  std::vector<double> out(p.lp.size(), 0.0), alpha;
  for (int64_t n = 0; n < p.N; ++n) {
    const double nll = forward(p, n, alpha);
    if (std::isinf(nll)) continue;  // no path: zero_infinity's zero, else PyTorch's gradient is NaN anyway
    const double gn = g.size() == 1 ? g[0] : g[size_t(n)];
    backward(p, n, alpha, nll, gn * sample_scale(p, n, reduction), out);
  }
  return from_vector(out, log_probs.sizes()).to(log_probs.dtype());
}

}  // namespace kiln::composite
