// NN layers (issue 16): layer_norm [4096, 1024] forward and forward + backward (input, weight and
// bias gradients), embedding of 64k tokens from a 50k x 512 table forward and forward + backward
// (the table's dense gradient), dropout(p = 0.1) of 16M float32 in training, pooling and
// resampling (max, average, global average, bilinear and nearest). float32; both sides get the
// same tensors (the dropout masks differ: each library draws its own).
#include <ATen/ATen.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kRows = 4096, kCols = 1024, kTable = 50000, kDim = 512, kTokens = 1 << 16, kDrop = 16 << 20;

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
