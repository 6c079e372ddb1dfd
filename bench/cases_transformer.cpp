// One training step of the sequence-transformer demo's model (tools/demo/sequence_transformer.cpp:
// 2 pre-norm layers, model 64, 4 heads, MLP 256, batch 64 x 16 tokens, causal attention,
// cross-entropy over an 11-token vocabulary, clip_grad_norm_ 1.0, AdamW), the same weights and
// data on both sides, dropout off. libtorch 1.13 has no scaled_dot_product_attention: its side
// composes matmul, a masked softmax and matmul, as a 1.13 user writes attention.
#include <kiln/clip_grad.h>
#include <kiln/kiln.h>
#include <kiln/optim.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kVocab = 11, kSeq = 16, kModel = 64, kHeads = 4, kHidden = 256, kLayers = 2, kBatch = 64;
constexpr int64_t kHeadDim = kModel / kHeads;

// Parameters in one order for both sides: embeddings, then per layer norm1 (w, b), qkv (w, b),
// out (w, b), norm2 (w, b), fc1 (w, b), fc2 (w, b), then the final norm (w, b) and head (w, b).
TwinParams make_weights() {
  TwinParams w;
  w.add({kVocab, kModel}, 0.02);
  w.add({kSeq, kModel}, 0.02);
  auto linear = [&](int64_t in, int64_t out) {
    w.add({out, in}, 1.0 / std::sqrt(double(in)));
    w.add({out}, 0.01);
  };
  auto norm = [&] {
    w.add({kModel}, 0.0, 1.0);
    w.add({kModel}, 0.0);
  };
  for (int64_t l = 0; l < kLayers; ++l) {
    norm();
    linear(kModel, 3 * kModel);
    linear(kModel, kModel);
    norm();
    linear(kModel, kHidden);
    linear(kHidden, kModel);
  }
  norm();
  linear(kModel, kVocab);
  return w;
}

struct KilnModel {
  std::vector<kiln::Tensor> p;
  std::unique_ptr<kiln::optim::AdamW> opt;
  kiln::Tensor tokens, targets;
  void step() {
    using namespace kiln;
    Tensor x = embedding(p[0], tokens) + p[1];
    size_t i = 2;
    for (int64_t l = 0; l < kLayers; ++l, i += 12) {
      Tensor h = layer_norm(x, {kModel}, p[i], p[i + 1]);
      TensorList qkv =
          linear(h, p[i + 2], p[i + 3]).reshape({kBatch, kSeq, 3, kHeads, kHeadDim}).permute({2, 0, 3, 1, 4}).unbind(0);
      Tensor a = scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], Tensor(), 0.0, true);
      x = x + linear(a.transpose(1, 2).reshape({kBatch, kSeq, kModel}), p[i + 4], p[i + 5]);
      h = layer_norm(x, {kModel}, p[i + 6], p[i + 7]);
      x = x + linear(gelu(linear(h, p[i + 8], p[i + 9])), p[i + 10], p[i + 11]);
    }
    Tensor logits = linear(layer_norm(x, {kModel}, p[i], p[i + 1]), p[i + 2], p[i + 3]);
    Tensor loss = cross_entropy(logits.reshape({-1, kVocab}), targets.reshape({-1}));
    opt->zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(p, 1.0);
    opt->step();
  }
};

struct TorchModel {
  std::vector<at::Tensor> p;
  std::unique_ptr<torch::optim::AdamW> opt;
  at::Tensor tokens, targets, causal;
  void step() {
    at::Tensor x = at::embedding(p[0], tokens) + p[1];
    size_t i = 2;
    for (int64_t l = 0; l < kLayers; ++l, i += 12) {
      at::Tensor h = at::layer_norm(x, {kModel}, p[i], p[i + 1]);
      auto qkv = at::linear(h, p[i + 2], p[i + 3])
                     .reshape({kBatch, kSeq, 3, kHeads, kHeadDim})
                     .permute({2, 0, 3, 1, 4})
                     .unbind(0);
      at::Tensor scores = at::matmul(qkv[0], qkv[1].transpose(-2, -1)) * (1.0 / std::sqrt(double(kHeadDim)));
      at::Tensor a = at::matmul(at::softmax(scores.masked_fill(causal, -INFINITY), -1), qkv[2]);
      x = x + at::linear(a.transpose(1, 2).reshape({kBatch, kSeq, kModel}), p[i + 4], p[i + 5]);
      h = at::layer_norm(x, {kModel}, p[i + 6], p[i + 7]);
      x = x + at::linear(at::gelu(at::linear(h, p[i + 8], p[i + 9])), p[i + 10], p[i + 11]);
    }
    at::Tensor logits = at::linear(at::layer_norm(x, {kModel}, p[i], p[i + 1]), p[i + 2], p[i + 3]);
    at::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, kVocab}), targets.reshape({-1}));
    for (at::Tensor& w : p) w.mutable_grad().reset();  // set_to_none, as kiln's zero_grad
    loss.backward();
    torch::nn::utils::clip_grad_norm_(p, 1.0);
    opt->step();
  }
};

Case transformer_step() {
  return {"transformer training step (2 layers, d 64, batch 64 x 16)", "training", 0, 0, "", [] {
            TwinParams w = make_weights();
            auto k = std::make_shared<KilnModel>();
            auto t = std::make_shared<TorchModel>();
            k->p = w.k;
            t->p = w.t;
            kiln::Tensor tokens = kiln::randint(0, kVocab, {kBatch, kSeq});
            kiln::Tensor targets = kiln::randint(0, kVocab, {kBatch, kSeq});
            k->tokens = tokens, k->targets = targets;
            t->tokens = to_torch(tokens), t->targets = to_torch(targets);
            t->causal = at::ones({kSeq, kSeq}, at::kBool).triu(1);
            kiln::optim::AdamOptions o = kiln::optim::AdamW::defaults();
            o.lr = 1e-3;
            k->opt = std::make_unique<kiln::optim::AdamW>(k->p, o);
            t->opt = std::make_unique<torch::optim::AdamW>(t->p, torch::optim::AdamWOptions(1e-3));
            return Prepared{[k] { k->step(); }, [t] { t->step(); }};
          }};
}

}  // namespace

std::vector<Case> transformer_cases() { return {transformer_step()}; }

}  // namespace kiln_bench
