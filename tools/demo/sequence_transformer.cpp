// Trains a 2-layer transformer encoder with a causal mask to reverse sequences of digits, twice
// from the same seed, and checks both the accuracy and that the two runs are bit-identical.
// The model is GPT-style (pre-norm): token + positional embedding, then per layer
// x += dropout(W_o . sdpa(W_q h, W_k h, W_v h, causal)), x += dropout(W_2 gelu(W_1 h)) with
// h = layer_norm(x), and a final layer_norm + linear to the vocabulary. It trains with AdamW, a
// LinearLR warm-up and clip_grad_norm_. Each sequence is [a_0 .. a_7, SEP, a_7 .. a_1]: at the
// SEP and after it the model predicts the input reversed (teacher forcing), so its token
// accuracy on held-out sequences measures whether attention learned to look back to the right
// place. Exits non-zero below 95% token accuracy, when the rerun differs, or when a position's
// output depends on a later token.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include "kiln/clip_grad.h"
#include "kiln/kiln.h"
#include "kiln/lr_scheduler.h"
#include "kiln/optim.h"

using namespace kiln;

namespace {

constexpr int64_t kDigits = 10, kSep = 10, kVocab = 11;
constexpr int64_t kLength = 8;         // digits to reverse
constexpr int64_t kSeq = 2 * kLength;  // the model's input: digits, SEP, the first 7 answers
constexpr int64_t kModel = 64, kHeads = 4, kHidden = 4 * kModel, kLayers = 2;
constexpr int64_t kBatch = 64;
constexpr int kSteps = 150, kWarmup = 20;
constexpr double kLr = 3e-3, kDropout = 0.1, kClip = 1.0, kTarget = 0.95;

// torch.nn.Linear's default initialization: uniform in +-1/sqrt(in).
struct Linear {
  Tensor weight, bias;
  Linear(int64_t in, int64_t out) {
    const double bound = 1.0 / std::sqrt(double(in));
    weight = ((rand({out, in}) * 2.0 - 1.0) * bound).requires_grad_(true);
    bias = ((rand({out}) * 2.0 - 1.0) * bound).requires_grad_(true);
  }
  Tensor operator()(const Tensor& x) const { return linear(x, weight, bias); }
};

struct LayerNorm {
  Tensor weight = ones({kModel}).requires_grad_(true), bias = zeros({kModel}).requires_grad_(true);
  Tensor operator()(const Tensor& x) const { return layer_norm(x, {kModel}, weight, bias); }
};

struct Block {
  LayerNorm norm1, norm2;
  Linear qkv{kModel, 3 * kModel}, out{kModel, kModel}, fc1{kModel, kHidden}, fc2{kHidden, kModel};

  Tensor operator()(Tensor x, bool training) const {
    const int64_t batch = x.size(0), seq = x.size(1), head_dim = kModel / kHeads;
    // [batch, seq, 3 * model] -> three [batch, heads, seq, head_dim]
    TensorList qkv_heads = qkv(norm1(x)).reshape({batch, seq, 3, kHeads, head_dim}).permute({2, 0, 3, 1, 4}).unbind(0);
    Tensor attended = scaled_dot_product_attention(qkv_heads[0], qkv_heads[1], qkv_heads[2], Tensor(), 0.0,
                                                   /*is_causal=*/true);
    attended = attended.transpose(1, 2).reshape({batch, seq, kModel});
    x = x + dropout(out(attended), kDropout, training);
    return x + dropout(fc2(gelu(fc1(norm2(x)))), kDropout, training);
  }
  TensorList params() const {
    return {norm1.weight, norm1.bias, norm2.weight, norm2.bias, qkv.weight, qkv.bias,
            out.weight,   out.bias,   fc1.weight,   fc1.bias,   fc2.weight, fc2.bias};
  }
};

struct Transformer {
  Tensor token_embedding = (randn({kVocab, kModel}) * 0.02).requires_grad_(true);
  Tensor position_embedding = (randn({kSeq, kModel}) * 0.02).requires_grad_(true);
  std::vector<Block> blocks = std::vector<Block>(kLayers);
  LayerNorm final_norm;
  Linear head{kModel, kVocab};

  Tensor operator()(const Tensor& tokens, bool training) const {
    Tensor x = embedding(token_embedding, tokens) + position_embedding;
    x = dropout(x, kDropout, training);
    for (const Block& b : blocks) x = b(x, training);
    return head(final_norm(x));  // [batch, seq, vocab]
  }
  TensorList params() const {
    TensorList out{token_embedding, position_embedding};
    for (const Block& b : blocks)
      for (const Tensor& p : b.params()) out.push_back(p);
    for (const Tensor& p : {final_norm.weight, final_norm.bias, head.weight, head.bias}) out.push_back(p);
    return out;
  }
};

// A batch of sequences: the model's input [n, kSeq] and the targets at positions kLength-1 ..
// kSeq-1 ([n, kLength + 1]: the last digit is predicted at the SEP, the others after it; the
// first target, at the last digit, is unknowable and is dropped by the loss below).
struct Batch {
  Tensor input, target;
};

Batch make_batch(int64_t n) {
  Tensor digits = randint(kDigits, {n, kLength});
  Tensor reversed = digits.flip({1});
  Tensor input = cat({digits, full({n, 1}, int64_t(kSep), kInt64), reversed.slice(1, 0, kLength - 1)}, 1);
  return {input, reversed};
}

// Logits at the SEP and after it: [n, kLength, vocab], aligned with Batch::target.
Tensor answer_logits(const Transformer& model, const Tensor& input, bool training) {
  return model(input, training).slice(1, kLength, kSeq);
}

double token_accuracy(const Transformer& model, const Batch& b) {
  NoGradGuard no_grad;
  Tensor predicted = argmax(answer_logits(model, b.input, /*training=*/false), -1);
  return eq(predicted, b.target).to(kFloat64).mean().item<double>();
}

// Whether the logits at each position ignore every later token: the causal mask at work (else
// the model could read the answer it is asked for from the next input position).
bool causal(const Transformer& model) {
  NoGradGuard no_grad;
  const Batch b = make_batch(4);
  Tensor changed = b.input.clone();
  changed.select(1, kSeq - 1).fill_(int64_t(kSep));  // the last input token only
  Tensor before = model(b.input, false).slice(1, 0, kSeq - 1), after = model(changed, false).slice(1, 0, kSeq - 1);
  return eq(before, after).all().item<bool>();
}

struct Result {
  std::vector<double> losses;
  std::vector<float> weights;  // every parameter, flattened, after training
  double accuracy = 0, seconds = 0;
  bool causal = false;
};

Result train(bool verbose) {
  manual_seed(0);
  Transformer model;
  const Batch held_out = make_batch(512);
  optim::AdamW opt(model.params(), {/*lr=*/kLr, /*beta1=*/0.9, /*beta2=*/0.98, /*eps=*/1e-8, /*weight_decay=*/0.01});
  optim::LinearLR warmup(opt, {/*start_factor=*/1.0 / kWarmup, /*end_factor=*/1.0, /*total_iters=*/kWarmup});
  Result r;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 1; step <= kSteps; ++step) {
    const Batch b = make_batch(kBatch);
    Tensor logits = answer_logits(model, b.input, /*training=*/true);
    Tensor loss = cross_entropy(logits.reshape({-1, kVocab}), b.target.reshape({-1}));
    opt.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model.params(), kClip);
    opt.step();
    warmup.step();
    r.losses.push_back(loss.item<double>());
    if (verbose && (step % 25 == 0 || step == 1))
      std::printf("step %3d  loss %.4f  lr %.5f\n", step, r.losses.back(), opt.lr());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.accuracy = token_accuracy(model, held_out);
  r.causal = causal(model);
  for (const Tensor& p : model.params())
    for (float v : p.detach().flatten().to_vector<float>()) r.weights.push_back(v);
  return r;
}

bool bit_identical(const Result& a, const Result& b) {
  return a.losses.size() == b.losses.size() && a.weights.size() == b.weights.size() &&
         std::memcmp(a.losses.data(), b.losses.data(), a.losses.size() * sizeof(double)) == 0 &&
         std::memcmp(a.weights.data(), b.weights.data(), a.weights.size() * sizeof(float)) == 0;
}

}  // namespace

int main() {
  try {
    const Result first = train(/*verbose=*/true);
    std::printf("trained %d steps in %.2f s (%.1f ms per step); held-out token accuracy %.2f%%\n", kSteps,
                first.seconds, 1000 * first.seconds / kSteps, 100 * first.accuracy);
    const Result rerun = train(/*verbose=*/false);
    const bool same = bit_identical(first, rerun);
    std::printf("rerun from the same seed: %s (final loss %.17g vs %.17g)\n", same ? "bit-identical" : "DIFFERENT",
                first.losses.back(), rerun.losses.back());
    if (!first.causal) {
      std::printf("FAILED: a position's logits changed with a later token\n");
      return 1;
    }
    if (first.accuracy < kTarget) {
      std::printf("FAILED: token accuracy below %.0f%%\n", 100 * kTarget);
      return 1;
    }
    return same ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sequence_transformer: %s\n", e.what());
    return 2;
  }
}
