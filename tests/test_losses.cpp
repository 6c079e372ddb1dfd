// The losses of issue 16 beyond what their registry samples check (tests/reference/*.json): the
// typed errors, PyTorch's edge cases (clamped logs, pos_weight broadcasting, log targets,
// beta = 0), and cross_entropy's probability targets with label smoothing and class weights.
// Expected values were computed with PyTorch 1.13 (/usr/bin/python3, torch.nn.functional) in
// float64, unless the comment derives them.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include "kiln/core.h"
#include "kiln/value.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/binary_cross_entropy.h"
#include "kiln/gen/api/binary_cross_entropy_with_logits.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/cdist.h"
#include "kiln/gen/api/cosine_embedding_loss.h"
#include "kiln/gen/api/cosine_similarity.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/ctc_loss.h"
#include "kiln/gen/api/gaussian_nll_loss.h"
#include "kiln/gen/api/hinge_embedding_loss.h"
#include "kiln/gen/api/huber_loss.h"
#include "kiln/gen/api/kl_div.h"
#include "kiln/gen/api/l1_loss.h"
#include "kiln/gen/api/log.h"
#include "kiln/gen/api/log_softmax.h"
#include "kiln/gen/api/margin_ranking_loss.h"
#include "kiln/gen/api/multilabel_margin_loss.h"
#include "kiln/gen/api/narrow.h"
#include "kiln/gen/api/nll_loss2d.h"
#include "kiln/gen/api/pairwise_distance.h"
#include "kiln/gen/api/poisson_nll_loss.h"
#include "kiln/gen/api/smooth_l1_loss.h"
#include "kiln/gen/api/soft_margin_loss.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/t.h"
#include "kiln/gen/api/triplet_margin_loss.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;

namespace {

Tensor f64(std::vector<double> v, std::vector<int64_t> shape) { return from_vector(v, shape); }

std::vector<double> values_of(const Tensor& t) { return t.contiguous().to_vector<double>(); }

}  // namespace

TEST_CASE("losses: a bad reduction is a ValueError naming the op and 'reduction'") {
  Tensor a = f64({0.2, 0.4, 0.6}, {3}), b = f64({0.1, 0.5, 0.9}, {3}), sign = f64({1, -1, 1}, {3});
  Tensor labels = from_vector<int64_t>({0, -1, 0}, {3});
  auto check = [](const char* op, auto&& f) {
    INFO(op);
    const std::string text = error_text<ValueError>(f);
    CHECK(has(text, op));
    CHECK(has(text, "'reduction'"));
  };
  check("binary_cross_entropy", [&] { binary_cross_entropy(a, b, Tensor(), 3); });
  check("binary_cross_entropy_with_logits", [&] { binary_cross_entropy_with_logits(a, b, Tensor(), Tensor(), -1); });
  check("l1_loss", [&] { l1_loss(a, b, 3); });
  check("smooth_l1_loss", [&] { smooth_l1_loss(a, b, 3); });
  check("huber_loss", [&] { huber_loss(a, b, 3); });
  check("kl_div", [&] { kl_div(a, b, 3); });
  check("poisson_nll_loss", [&] { poisson_nll_loss(a, b, true, false, 1e-8, 3); });
  check("gaussian_nll_loss", [&] { gaussian_nll_loss(a, b, b, false, 1e-6, 3); });
  check("margin_ranking_loss", [&] { margin_ranking_loss(a, b, sign, 0.0, 3); });
  check("hinge_embedding_loss", [&] { hinge_embedding_loss(a, sign, 1.0, 3); });
  check("soft_margin_loss", [&] { soft_margin_loss(a, sign, 3); });
  check("multilabel_margin_loss", [&] { multilabel_margin_loss(a, labels, 3); });
  check("cosine_embedding_loss", [&] { cosine_embedding_loss(a.view({1, 3}), b.view({1, 3}), f64({1}, {1}), 0.0, 3); });
  check("triplet_margin_loss", [&] { triplet_margin_loss(a, b, a, 1.0, 2, 1e-6, false, 3); });
  check("cross_entropy", [&] { cross_entropy(a.view({1, 3}), b.view({1, 3}), Tensor(), 3); });
}

TEST_CASE("losses: mismatched shapes are ShapeErrors naming the op and the argument, with PyTorch's text") {
  Tensor x23 = f64({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, {2, 3}), t3 = f64({0, 1, 0}, {3});
  std::string text = error_text<ShapeError>([&] { binary_cross_entropy(x23, t3); });
  CHECK(has(text, "binary_cross_entropy"));
  CHECK(has(text, "'target'"));
  CHECK(has(text,
            "Using a target size (torch.Size([3])) that is different to the input size (torch.Size([2, 3])) is "
            "deprecated. Please ensure they have the same size."));
  text = error_text<ShapeError>([&] { binary_cross_entropy_with_logits(x23, t3); });
  CHECK(has(text, "'target'"));
  CHECK(has(text, "Target size (torch.Size([3])) must be the same as input size (torch.Size([2, 3]))"));
  CHECK(has(error_text<ShapeError>([&] { binary_cross_entropy(x23, x23, f64({1, 2}, {2})); }), "'weight'"));
  // The broadcasting losses fail on shapes that do not broadcast, naming target.
  Tensor t4 = f64({0, 1, 0, 1}, {4});
  for (auto* op : {"l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss"}) {
    INFO(op);
    text = error_text<ShapeError>([&] { call(op, {x23, t4}); });
    CHECK(has(text, op));
    CHECK(has(text, "'target'"));
  }
  CHECK(has(error_text<ShapeError>([&] {
              multilabel_margin_loss(x23, from_vector<int64_t>({0, 1, 2}, {3}));
            }),
            "inconsistent size [3] for argument #2 'target'"));
  CHECK(has(error_text<ShapeError>([&] {
              cosine_embedding_loss(t3, x23, f64({1, 1}, {2}));
            }),
            "1D target tensor expects 2D input tensors, but found inputs with sizes [3] and [2, 3]."));
  CHECK(has(error_text<ShapeError>([&] { cosine_embedding_loss(x23, x23, x23); }),
            "0D or 1D target tensor expected, multi-target not supported"));
  CHECK(has(error_text<ShapeError>([&] { triplet_margin_loss(x23, x23, t3); }),
            "All inputs should have same dimension but got 2D, 2D and 1D inputs."));
  CHECK(has(error_text<ShapeError>([&] { margin_ranking_loss(t3, t3, x23); }),
            "All input tensors should have same dimension but got sizes: input1: torch.Size([3])"));
  text = error_text<ShapeError>([&] { gaussian_nll_loss(x23, x23, t3); });
  CHECK(has(text, "'var'"));
  CHECK(has(text, "var is of incorrect size"));
  CHECK(has(error_text<ShapeError>([&] { cosine_similarity(x23, t4); }), "'x2'"));
  CHECK(has(error_text<ShapeError>([&] { pairwise_distance(x23, t4); }), "'x2'"));
  text = error_text<ShapeError>([&] {
    nll_loss2d(zeros({2, 3, 4}, TensorOptions(kFloat64)), zeros({2, 4}, TensorOptions(kInt64)));
  });
  CHECK(has(text, "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"));
}

TEST_CASE("losses: value errors of PyTorch's") {
  Tensor x = f64({0.5, 1.5}, {2}), t = f64({1, 0}, {2});
  CHECK(has(error_text<ValueError>([&] { binary_cross_entropy(x, t); }),
            "all elements of input should be between 0 and 1"));
  CHECK(has(error_text<ValueError>([&] { binary_cross_entropy(f64({NAN, 0.5}, {2}), t); }), "between 0 and 1"));
  CHECK(has(error_text<ValueError>([&] { smooth_l1_loss(x, t, 1, -0.5); }),
            "smooth_l1_loss does not support negative values for beta."));
  CHECK(has(error_text<ValueError>([&] { huber_loss(x, t, 1, 0.0); }),
            "huber_loss does not support non-positive values for delta."));
  CHECK(has(error_text<ValueError>([&] {
              gaussian_nll_loss(x, t, f64({1, -0.1}, {2}));
            }),
            "var has negative entry/entries"));
  Tensor logits = f64({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, {2, 3});
  Tensor probs = f64({0.2, 0.3, 0.5, 1, 0, 0}, {2, 3});
  CHECK(has(error_text<ValueError>([&] { cross_entropy(logits, probs, Tensor(), 1, -100, 1.5); }),
            "label_smoothing must be between 0.0 and 1.0. Got: 1.5"));
  CHECK(has(error_text<ValueError>([&] { cross_entropy(logits, probs, Tensor(), 1, 0); }),
            "ignore_index is not supported for floating point target"));
  CHECK(has(error_text<DTypeError>([&] {
              cross_entropy(logits, zeros({2, 3}, TensorOptions(kInt64)));
            }),
            "Expected floating point type for target with class probabilities"));
}

TEST_CASE("multilabel_margin_loss: targets end at the first -1, any value below -1 or from C up is an IndexError") {
  Tensor x = f64({0.2, 0.9, 0.4, 0.6, 0.1, 0.8, 0.3, 0.7}, {2, 4});
  // Row 0 targets {3, 0}, row 1 target {1} (the 2s after its -1 do not count).
  Tensor target = from_vector<int64_t>({3, 0, -1, 1, 1, -1, 2, 2}, {2, 4});
  expect_values(multilabel_margin_loss(x, target, 0), {2}, {1.25, 0.42499999999999993}, 1e-12);
  expect_values(multilabel_margin_loss(x, target), {}, {(1.25 + 0.425) / 2}, 1e-12);
  expect_values(multilabel_margin_loss(x.select(0, 1), target.select(0, 1), 0), {}, {0.425}, 1e-12);  // 1-d input
  for (int64_t bad : {4, -2}) {
    INFO(bad);
    Tensor t = from_vector<int64_t>({1, -1, bad, 0, 0, 1, 2, 3}, {2, 4});
    const std::string text = error_text<IndexError>([&] { multilabel_margin_loss(x, t); });
    CHECK(has(text, "multilabel_margin_loss"));
    CHECK(has(text, "argument #2 'target' is out of range"));
  }
  CHECK(has(error_text<DTypeError>([&] {
              multilabel_margin_loss(x, zeros({2, 4}, TensorOptions(kFloat64)));
            }),
            "expected scalar type Long but found"));
}

TEST_CASE("binary_cross_entropy clamps each log to >= -100, its gradient stays finite at 0 and 1") {
  Tensor x = f64({0, 1, 0.5}, {3}).requires_grad_();
  Tensor t = f64({1, 0, 1}, {3});
  Tensor loss = binary_cross_entropy(x, t, Tensor(), 0);
  expect_values(loss, {3}, {100, 100, 0.6931471805599453}, 1e-12);
  binary_cross_entropy(x, t, Tensor(), 2).backward();
  for (double g : values_of(x.grad())) CHECK(std::isfinite(g));
  // d/dx at 0.5 with target 1: -1 / x = -2
  CHECK(values_of(x.grad())[2] == doctest::Approx(-2.0));
  // weight broadcasts against self
  expect_values(binary_cross_entropy(x.detach(), t, f64({2}, {1}), 2), {}, {2 * (200 + 0.6931471805599453)}, 1e-9);
}

TEST_CASE("binary_cross_entropy_with_logits: pos_weight broadcasts over the batch, weight over classes") {
  Tensor x = f64({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3});
  Tensor t = f64({1.0, 0.0, 0.3, 0.0, 1.0, 0.8}, {2, 3});
  Tensor pos_weight = f64({2.0, 0.5, 1.0}, {3});
  expect_values(binary_cross_entropy_with_logits(x, t, Tensor(), pos_weight, 0), {2, 3},
                {0.9481539683602134, 0.3132616875182228, 1.5269280110429726, 1.7014132779827524, 0.28796970993942184,
                 0.9868710061149},
                1e-12);
  expect_values(binary_cross_entropy_with_logits(x, t, f64({1.0, 2.0}, {2, 1}), pos_weight), {}, {1.4568086091659262},
                1e-12);
  // Large logits do not overflow: x = 800, target 1 gives log(1 + e^-800) = 0; x = -800 gives 800.
  expect_values(binary_cross_entropy_with_logits(f64({800, -800}, {2}), f64({1, 1}, {2}), Tensor(), Tensor(), 0), {2},
                {0, 800}, 1e-12);
}

TEST_CASE("kl_div: log_target takes log-probabilities, giving the same loss") {
  Tensor input = f64({-1.2, -0.4, -2.0, -0.7}, {2, 2});
  Tensor target = f64({0.3, 0.7, 0.0, 1.0}, {2, 2});
  // target * (log(target) - input), 0 where target is 0
  std::vector<double> expected;
  const std::vector<double> in = values_of(input), tv = values_of(target);
  for (size_t i = 0; i < in.size(); ++i) expected.push_back(tv[i] == 0 ? 0.0 : tv[i] * (std::log(tv[i]) - in[i]));
  expect_values(kl_div(input, target, 0), {2, 2}, expected, 1e-12);
  Tensor nonzero = f64({0.3, 0.7, 0.4, 0.6}, {2, 2});
  expect_values(kl_div(input, kiln::log(nonzero), 2, true), {}, values_of(kl_div(input, nonzero, 2)), 1e-12);
}

TEST_CASE("smooth_l1_loss with beta 0 is l1_loss, huber_loss(delta) is delta * smooth_l1_loss(beta = delta)") {
  Tensor x = f64({0.1, -2.0, 3.5, 0.4, 1.0, -0.2}, {2, 3});
  Tensor y = f64({0.3, 1.0, 3.0, -0.4, 1.0, 0.9}, {2, 3});
  expect_values(smooth_l1_loss(x, y, 0, 0.0), {2, 3}, values_of(l1_loss(x, y, 0)), 1e-15);
  expect_values(l1_loss(x, y, 0), {2, 3}, {0.2, 3.0, 0.5, 0.8, 0.0, 1.1}, 1e-12);
  for (double d : {0.5, 1.0, 2.0}) {
    INFO(d);
    expect_values(huber_loss(x, y, 0, d), {2, 3}, values_of(smooth_l1_loss(x, y, 0, d) * d), 1e-12);
  }
  // |z| = 0.5 below beta 1: 0.5 * 0.25; |z| = 3 above: 3 - 0.5
  expect_values(smooth_l1_loss(f64({0.5, 3}, {2}), f64({0, 0}, {2}), 0), {2}, {0.125, 2.5}, 1e-15);
}

TEST_CASE("cross_entropy: probability targets with label smoothing and class weights") {
  Tensor logits = f64({1.0, 2.0, 0.5, -1.0, 0.0, -0.5, 1.5, 2.0, 0.3, 0.1, -0.2, 0.4}, {3, 4});
  Tensor probs = f64({0.7, 0.1, 0.1, 0.1, 0.0, 0.25, 0.25, 0.5, 1.0, 0.0, 0.0, 0.0}, {3, 4});
  Tensor weight = f64({1.0, 2.0, 0.5, 1.5}, {4});
  expect_values(cross_entropy(logits, probs, weight, 0, -100, 0.2), {3},
                {1.8520555448370173, 2.2238567435511567, 1.3494913536181372}, 1e-12);
  expect_values(cross_entropy(logits, probs, weight, 1, -100, 0.2), {}, {1.8084678806687708}, 1e-12);
  expect_values(cross_entropy(logits, probs, weight, 2, -100, 0.2), {}, {5.425403642006312}, 1e-12);
}

TEST_CASE("cross_entropy: class indices with label smoothing, class weights and an ignored target") {
  Tensor logits = f64({1.0, 2.0, 0.5, -1.0, 0.0, -0.5, 1.5, 2.0, 0.3, 0.1, -0.2, 0.4}, {3, 4});
  Tensor target = from_vector<int64_t>({1, 3, -100}, {3});
  Tensor weight = f64({1.0, 2.0, 0.5, 1.5}, {4});
  expect_values(cross_entropy(logits, target, weight, 0, -100, 0.2), {3}, {1.2285865114588337, 1.2339572430734649, 0},
                1e-12);
  // mean: both terms divided by the weight of the non-ignored targets (2 + 1.5)
  expect_values(cross_entropy(logits, target, weight, 1, -100, 0.2), {}, {0.7035839298663711}, 1e-12);
  expect_values(cross_entropy(logits, target, weight, 2, -100, 0.2), {}, {2.4625437545322986}, 1e-12);
  expect_values(cross_entropy(logits, target, Tensor(), 1, -100, 0.2), {}, {0.8105934466544676}, 1e-12);
  // A negative label_smoothing is none, as in PyTorch.
  expect_values(cross_entropy(logits, target, weight, 1, -100, -0.5), {},
                values_of(cross_entropy(logits, target, weight)), 1e-15);
}

TEST_CASE("poisson_nll_loss: Stirling's term only for targets above 1") {
  // log_input false: input - target * log(input + eps), plus t log t - t + 0.5 log(2 pi t) for t > 1
  expect_values(poisson_nll_loss(f64({0.5, 1.0, 2.0}, {3}), f64({0, 1, 3}, {3}), false, true, 1e-8, 0), {3},
                {0.5, 0.9999999900000001, 1.6846399868632211}, 1e-12);
}

TEST_CASE("cosine_similarity: a zero vector's norm is clamped to eps, giving 0, not NaN") {
  Tensor zero = zeros({1, 3}, TensorOptions(kFloat64)), ones3 = ones({1, 3}, TensorOptions(kFloat64));
  expect_values(cosine_similarity(zero, ones3), {1}, {0.0}, 0);
  // x2 [1, 3] broadcasts over x1's rows; cos of parallel vectors is 1
  expect_values(cosine_similarity(f64({1, 2, 3, -1, -2, -3}, {2, 3}), f64({2, 4, 6}, {1, 3})), {2}, {1, -1}, 1e-12);
  // pairwise_distance: ||x1 - x2 + eps||_p over the last dim
  expect_values(pairwise_distance(f64({3, 4}, {1, 2}), f64({0, 0}, {1, 2}), 2, 0.0), {1}, {5}, 1e-12);
}

TEST_CASE("ctc_loss: values, infeasible targets, zero_infinity, gradient through log_softmax, errors") {
  Tensor z = f64({0.5,  -1.0, 0.2, 1.0, 0.1, 0.3, -0.4, 0.0,  1.5, 0.0,  -0.5, 0.2,
                  -1.0, 2.0,  0.5, 0.1, 0.0, 0.7, 0.3,  -0.2, 0.4, -0.3, 1.2,  0.6},
                 {3, 2, 4})
                 .requires_grad_();
  Tensor lp = log_softmax(z, 2);
  Tensor targets = from_vector<int64_t>({1, 2, 3, 0}, {2, 2});
  const std::vector<int64_t> il = {3, 3}, tl = {2, 1};
  expect_values(ctc_loss(lp, targets, il, tl, 0, 0), {2}, {3.719253140352855, 3.570437887820032}, 1e-12);
  expect_values(ctc_loss(lp, targets, il, tl, 0, 2), {}, {7.289691028172887}, 1e-12);
  Tensor mean = ctc_loss(lp, targets, il, tl);  // each loss over its target length, then the batch mean
  expect_values(mean, {}, {2.7150322289982296}, 1e-12);
  // The gradient of the logits equals PyTorch's (its formula differs only by a term log_softmax cancels).
  mean.backward();
  expect_values(
      z.grad(), {3, 2, 4},
      {-0.03247784266423773,   -0.1328804464869493,  0.05126528939394705,  0.11409299975723997,  -0.1320847882901384,
       0.16360537679013615,    0.08124402573523777,  -0.11276461423523552, 0.05160171084283275,  -0.09016484707129561,
       -0.0032106612600557843, 0.04177379748851866,  -0.05414796300658137, 0.35149734585743714,  0.07842965907291798,
       -0.37577904192377376,   0.03804654158061,     0.09714491070266924,  -0.17468762557319437, 0.03949617328991512,
       -0.12217752869384542,   0.050225790599318844, 0.22509637677805558,  -0.15314463868352898},
      1e-10);
  // "1 1" needs 3 frames (a blank between the repeats): with 1 the loss is infinite, or 0.
  Tensor repeats = from_vector<int64_t>({1, 1, 3, 0}, {2, 2});
  const std::vector<int64_t> short_il = {1, 3};
  expect_values(ctc_loss(lp, repeats, short_il, tl, 0, 0), {2}, {INFINITY, 3.570437887820032}, 1e-12);
  expect_values(ctc_loss(lp, repeats, short_il, tl, 0, 0, true), {2}, {0, 3.570437887820032}, 1e-12);
  CHECK(has(error_text<ValueError>([&] { ctc_loss(lp, targets, il, tl, 4); }), "blank must be in label range"));
  CHECK(has(error_text<ShapeError>([&] { ctc_loss(lp, targets, std::vector<int64_t>{3}, tl); }),
            "input_lengths must be of size batch_size"));
  CHECK(has(error_text<ValueError>([&] {
              ctc_loss(lp, targets, std::vector<int64_t>{4, 3}, tl);
            }),
            "Expected input_lengths to have value at most 3, but got value 4"));
  CHECK(has(error_text<IndexError>([&] {
              ctc_loss(lp, from_vector<int64_t>({1, 7, 3, 0}, {2, 2}), il, tl);
            }),
            "'targets'"));
  CHECK(has(error_text<ValueError>([&] { ctc_loss(lp, targets, il, tl, 0, 5); }), "'reduction'"));
}

TEST_CASE("cdist: p = inf, compute modes, and no NaN gradient where rows coincide") {
  Tensor x1 = f64({0, 0, 1, 2, 3, -1}, {3, 2}), x2 = f64({1, 1, -2, 0.5}, {2, 2});
  // max |difference| (PyTorch 1.13: [[1, 2], [1, 3], [2, 5]])
  expect_values(cdist(x1, x2, INFINITY), {3, 2}, {1, 2, 1, 3, 2, 5});
  // 30 rows: the matrix product's distances; compute_mode 2 (never the product) agrees
  Tensor many = cat(std::vector<Tensor>(10, x1), 0);
  Tensor by_product = cdist(many, x2), by_norm = cdist(many, x2, 2.0, 2);
  CHECK(values_of(by_product).size() == 60);
  expect_values(by_product, {30, 2}, values_of(by_norm), 1e-12);
  // distances of coincident rows are 0 with gradient 0, by both routes (PyTorch 1.13's values)
  for (int64_t mode : {0, 1}) {
    Tensor x = many.clone().requires_grad_();
    kiln::sum(cdist(x, many, 2.0, mode)).backward();
    expect_values(x.grad().narrow(0, 0, 3), {3, 2},
                  {-13.959002, -5.7820042, -1.0748723, 17.264772, 15.033875, -11.482768}, 1e-5);
  }
}

TEST_CASE("cdist: PyTorch's errors, naming the argument") {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(has(error_text<ShapeError>([&] { cdist(f64({1, 2}, {2}), x); }),
            "cdist only supports at least 2D tensors, X1 got: 1D"));
  CHECK(has(error_text<ShapeError>([&] { cdist(x, x.t()); }),
            "argument 'x2': X1 and X2 must have the same number of columns. X1: 2 X2: 3"));
  CHECK(has(error_text<ValueError>([&] { cdist(x, x, -1.0); }), "cdist only supports non-negative p values"));
  CHECK(has(error_text<ValueError>([&] { cdist(x, x, 2.0, 3); }), "possible modes: 0, 1, 2, but was: 3"));
  CHECK(has(error_text<DTypeError>([&] { cdist(x, x.to(kFloat32)); }), "argument 'x2'"));
  CHECK_THROWS_AS(cdist(x.to(kInt64), x.to(kInt64)), DTypeError);
  CHECK(cdist(zeros({0, 2}), x.to(kFloat32)).sizes().vec() == std::vector<int64_t>{0, 3});
  expect_values(cdist(zeros({2, 0}), zeros({3, 0})), {2, 3}, {0, 0, 0, 0, 0, 0});
}
