// NN layers (issue 16): layer_norm [4096, 1024] forward and forward + backward (input, weight and
// bias gradients), embedding of 64k tokens from a 50k x 512 table forward and forward + backward
// (the table's dense gradient), dropout(p = 0.1) of 16M float32 in training, pooling and
// resampling (max, average, global average, bilinear and nearest). float32; both sides get the
// same tensors (the dropout masks differ: each library draws its own). conv2d
// [16,64,56,56] x [64,64,3,3] (padding 1) forward and forward + backward (input, weight and bias
// gradients): both run oneDNN. Causal attention [8 heads, L=1024, E=64] forward and forward +
// backward: kiln's fused blockwise kernel, libtorch 1.13's composition (matmul, masked softmax,
// matmul; it has no scaled_dot_product_attention); and forward + backward with dropout 0.1 on the
// probabilities (kiln drops inside the kernel, libtorch composes dropout; each draws its own mask).
#include <ATen/ATen.h>
#include <cmath>
#include <torch/csrc/autograd/autograd.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kConvN = 16, kConvC = 64, kConvHW = 56;
// one 3x3 convolution's multiply-adds, counted as two flops
constexpr double kConvFlops = 2.0 * kConvN * kConvC * kConvHW * kConvHW * kConvC * 9;
constexpr int64_t kHeads = 8, kSeq = 1024, kHeadDim = 64;
// q k^T and P v, each 2 * L * L * E per head; a causal mask skips half
constexpr double kAttnFlops = 2.0 * 2 * kHeads * kSeq * kSeq * kHeadDim / 2;
constexpr int64_t kRows = 4096, kCols = 1024, kTable = 50000, kDim = 512, kTokens = 1 << 16, kDrop = 16 << 20;

at::Tensor torch_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& causal, double dropout_p = 0) {
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / 8.0);  // 1 / sqrt(64)
  at::Tensor probs = at::softmax(scores.masked_fill(causal, -INFINITY), -1);
  return at::matmul(dropout_p > 0 ? at::dropout(probs, dropout_p, true) : probs, v);
}

// Causal attention forward + backward, dropout_p on the probabilities.
Prepared attention_fwd_bwd(double dropout_p) {
  Twin q = twin_randn({kHeads, kSeq, kHeadDim}), k = twin_randn({kHeads, kSeq, kHeadDim}),
       v = twin_randn({kHeads, kSeq, kHeadDim}), g = twin_randn({kHeads, kSeq, kHeadDim});
  kiln::Tensor kq = q.k.detach().requires_grad_(true), kk = k.k.detach().requires_grad_(true),
               kv = v.k.detach().requires_grad_(true);
  at::Tensor tq = q.t.detach().requires_grad_(true), tk = k.t.detach().requires_grad_(true),
             tv = v.t.detach().requires_grad_(true);
  at::Tensor causal = at::ones({kSeq, kSeq}, at::kBool).triu(1);
  return Prepared{[=] {
                    kiln::TensorList grads = kiln::autograd::grad(
                        {kiln::scaled_dot_product_attention(kq, kk, kv, {}, dropout_p, true)}, {kq, kk, kv}, {g.k});
                  },
                  [=] {
                    std::vector<at::Tensor> grads = torch::autograd::grad(
                        {torch_causal_attention(tq, tk, tv, causal, dropout_p)}, {tq, tk, tv}, {g.t});
                  }};
}

}  // namespace

std::vector<Case> nn_cases() {
  return {
      {"layer_norm [4096,1024] fwd", "nn", double(kRows * kCols) * 4 * 2, 0, "",
       [] {
         Twin x = twin_randn({kRows, kCols}), w = twin_randn({kCols}), b = twin_randn({kCols});
         return Prepared{[x, w, b] { kiln::Tensor r = kiln::layer_norm(x.k, {kCols}, w.k, b.k); },
                         [x, w, b] { at::Tensor r = at::layer_norm(x.t, {kCols}, w.t, b.t); }};
       }},
      {"layer_norm [4096,1024] fwd+bwd", "nn", double(kRows * kCols) * 4 * 5, 0, "",
       [] {
         Twin x = twin_randn({kRows, kCols}), w = twin_randn({kCols}), b = twin_randn({kCols}),
              g = twin_randn({kRows, kCols});
         kiln::Tensor kx = x.k.detach().requires_grad_(true), kw = w.k.detach().requires_grad_(true),
                      kb = b.k.detach().requires_grad_(true);
         at::Tensor tx = x.t.detach().requires_grad_(true), tw = w.t.detach().requires_grad_(true),
                    tb = b.t.detach().requires_grad_(true);
         return Prepared{[=] { kiln::layer_norm(kx, {kCols}, kw, kb).backward(g.k); },
                         [=] { at::layer_norm(tx, {kCols}, tw, tb).backward(g.t); }};
       }},
      {"embedding 64k tokens from 50k x 512 fwd", "nn", double(kTokens * kDim) * 4 * 2, 0, "",
       [] {
         Twin w = twin_randn({kTable, kDim});
         kiln::Tensor ki = kiln::randint(kTable, {kTokens}, kiln::TensorOptions(kiln::DType::Int64));
         Twin idx{ki, to_torch(ki)};
         return Prepared{[w, idx] { kiln::Tensor r = kiln::embedding(w.k, idx.k); },
                         [w, idx] { at::Tensor r = at::embedding(w.t, idx.t); }};
       }},
      {"embedding 64k tokens from 50k x 512 fwd+bwd", "nn", double(kTokens * kDim) * 4 * 4 + double(kTable * kDim) * 4,
       0, "",
       [] {
         Twin w = twin_randn({kTable, kDim}), g = twin_randn({kTokens, kDim});
         kiln::Tensor ki = kiln::randint(kTable, {kTokens}, kiln::TensorOptions(kiln::DType::Int64));
         Twin idx{ki, to_torch(ki)};
         kiln::Tensor kw = w.k.detach().requires_grad_(true);
         at::Tensor tw = w.t.detach().requires_grad_(true);
         return Prepared{[=]() mutable {
                           kiln::embedding(kw, idx.k).backward(g.k);
                           kw.mutable_grad() = kiln::Tensor();
                         },
                         [=]() mutable {
                           at::embedding(tw, idx.t).backward(g.t);
                           tw.mutable_grad().reset();
                         }};
       }},
      {"conv2d [16,64,56,56] x [64,64,3,3] fwd", "nn", 0, kConvFlops, "",
       [] {
         Twin x = twin_randn({kConvN, kConvC, kConvHW, kConvHW}), w = twin_randn({kConvC, kConvC, 3, 3}),
              b = twin_randn({kConvC});
         return Prepared{[x, w, b] { kiln::Tensor r = kiln::conv2d(x.k, w.k, b.k, {1}, {1}); },
                         [x, w, b] { at::Tensor r = at::conv2d(x.t, w.t, b.t, 1, 1); }};
       }},
      {"conv2d [16,64,56,56] x [64,64,3,3] fwd+bwd", "nn", 0, 3 * kConvFlops, "",
       [] {
         Twin x = twin_randn({kConvN, kConvC, kConvHW, kConvHW}), w = twin_randn({kConvC, kConvC, 3, 3}),
              b = twin_randn({kConvC}), g = twin_randn({kConvN, kConvC, kConvHW, kConvHW});
         kiln::Tensor kx = x.k.detach().requires_grad_(true), kw = w.k.detach().requires_grad_(true),
                      kb = b.k.detach().requires_grad_(true);
         at::Tensor tx = x.t.detach().requires_grad_(true), tw = w.t.detach().requires_grad_(true),
                    tb = b.t.detach().requires_grad_(true);
         return Prepared{[=] {
                           kiln::TensorList grads = kiln::autograd::grad({kiln::conv2d(kx, kw, kb, {1}, {1})},
                                                                         {kx, kw, kb}, {g.k});
                         },
                         [=] {
                           std::vector<at::Tensor> grads = torch::autograd::grad({at::conv2d(tx, tw, tb, 1, 1)},
                                                                                {tx, tw, tb}, {g.t});
                         }};
       }},
      {"causal attention [8,1024,64] fwd", "nn", 0, kAttnFlops / 2, "",
       [] {
         Twin q = twin_randn({kHeads, kSeq, kHeadDim}), k = twin_randn({kHeads, kSeq, kHeadDim}),
              v = twin_randn({kHeads, kSeq, kHeadDim});
         at::Tensor causal = at::ones({kSeq, kSeq}, at::kBool).triu(1);
         return Prepared{[q, k, v] {
                           kiln::Tensor r = kiln::scaled_dot_product_attention(q.k, k.k, v.k, {}, 0.0, true);
                         },
                         [q, k, v, causal] { at::Tensor r = torch_causal_attention(q.t, k.t, v.t, causal); }};
       }},
      {"causal attention [8,1024,64] fwd+bwd", "nn", 0, kAttnFlops * 2, "", [] { return attention_fwd_bwd(0.0); }},
      {"causal attention [8,1024,64] p=0.1 fwd+bwd", "nn", 0, kAttnFlops * 2, "",
       [] { return attention_fwd_bwd(0.1); }},
      {"dropout 16M float32 p=0.1 train", "nn", double(kDrop) * 4 * 2, 0, "",
       [] {
         Twin x = twin_randn({kDrop});
         return Prepared{[x] { kiln::Tensor r = kiln::dropout(x.k, 0.1, true); },
                         [x] { at::Tensor r = at::dropout(x.t, 0.1, true); }};
       }},
      // pooling and resampling: a ResNet stem's max pool, an average pool, global average
      // pooling and a 2x bilinear upsampling (NCHW, float32)
      {"max_pool2d [32,64,112,112] k3 s2 p1 fwd", "nn", double(32 * 64 * 112 * 112) * 4 * 1.25, 0, "",
       [] {
         Twin x = twin_randn({32, 64, 112, 112});
         return Prepared{[x] {
                           kiln::Tensor r = kiln::max_pool2d(x.k, {3, 3}, {2, 2}, {1, 1});
                         },
                         [x] {
                           at::Tensor r = at::max_pool2d(x.t, {3, 3}, {2, 2}, {1, 1});
                         }};
       }},
      {"max_pool2d [32,64,112,112] k3 s2 p1 fwd+bwd", "nn", double(32 * 64 * 112 * 112) * 4 * 3, 0, "",
       [] {
         Twin x = twin_randn({32, 64, 112, 112}), g = twin_randn({32, 64, 56, 56});
         kiln::Tensor kx = x.k.detach().requires_grad_(true);
         at::Tensor tx = x.t.detach().requires_grad_(true);
         return Prepared{[=] {
                           kiln::max_pool2d(kx, {3, 3}, {2, 2}, {1, 1}).backward(g.k);
                         },
                         [=] {
                           at::max_pool2d(tx, {3, 3}, {2, 2}, {1, 1}).backward(g.t);
                         }};
       }},
      {"avg_pool2d [32,64,56,56] k3 s2 p1 fwd+bwd", "nn", double(32 * 64 * 56 * 56) * 4 * 3, 0, "",
       [] {
         Twin x = twin_randn({32, 64, 56, 56}), g = twin_randn({32, 64, 28, 28});
         kiln::Tensor kx = x.k.detach().requires_grad_(true);
         at::Tensor tx = x.t.detach().requires_grad_(true);
         return Prepared{[=] {
                           kiln::avg_pool2d(kx, {3, 3}, {2, 2}, {1, 1}).backward(g.k);
                         },
                         [=] {
                           at::avg_pool2d(tx, {3, 3}, {2, 2}, {1, 1}).backward(g.t);
                         }};
       }},
      {"adaptive_avg_pool2d [64,512,7,7] -> 1x1 fwd", "nn", double(64 * 512 * 49) * 4, 0, "",
       [] {
         Twin x = twin_randn({64, 512, 7, 7});
         return Prepared{[x] {
                           kiln::Tensor r = kiln::adaptive_avg_pool2d(x.k, {1, 1});
                         },
                         [x] {
                           at::Tensor r = at::adaptive_avg_pool2d(x.t, {1, 1});
                         }};
       }},
      {"upsample_bilinear2d [8,64,64,64] x2 fwd+bwd", "nn", double(8 * 64 * 64 * 64) * 4 * 10, 0, "",
       [] {
         Twin x = twin_randn({8, 64, 64, 64}), g = twin_randn({8, 64, 128, 128});
         kiln::Tensor kx = x.k.detach().requires_grad_(true);
         at::Tensor tx = x.t.detach().requires_grad_(true);
         return Prepared{[=] {
                           kiln::upsample_bilinear2d(kx, {128, 128}, false).backward(g.k);
                         },
                         [=] {
                           at::upsample_bilinear2d(tx, {128, 128}, false).backward(g.t);
                         }};
       }},
      {"upsample_nearest2d [8,64,64,64] x2 fwd", "nn", double(8 * 64 * 64 * 64) * 4 * 5, 0, "",
       [] {
         Twin x = twin_randn({8, 64, 64, 64});
         return Prepared{[x] {
                           kiln::Tensor r = kiln::upsample_nearest2d(x.k, {128, 128});
                         },
                         [x] {
                           at::Tensor r = at::upsample_nearest2d(x.t, {128, 128});
                         }};
       }},
  };
}

}  // namespace kiln_bench
