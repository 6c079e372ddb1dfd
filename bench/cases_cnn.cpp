// Batch norm in training over [32, 64, 56, 56] (a ResNet stage's activations; running statistics
// updated) forward and forward + backward (input, weight and bias gradients), group norm over the
// same activations in 32 groups (forward and forward + backward), and one training
// step of the CNN demo's model (tools/demo/digits_cnn.cpp: conv3x3(1->16) - batch_norm - relu -
// max_pool2 - conv3x3(16->32) - batch_norm - relu - max_pool2 - linear(128->10), cross-entropy,
// Adam; batch 64 of 8x8 images; dropout off so both sides compute the same thing), the same
// weights and data on both sides.
#include <kiln/kiln.h>
#include <kiln/optim.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kN = 32, kC = 64, kHW = 56;
constexpr int64_t kBatch = 64, kClasses = 10;

Case batch_norm_case(bool backward) {
  const double bytes = double(kN * kC * kHW * kHW) * 4 * (backward ? 5 : 3);  // reads and writes, once each
  return {backward ? "batch_norm training [32,64,56,56] fwd+bwd" : "batch_norm training [32,64,56,56] fwd", "nn",
          bytes, 0, "", [backward] {
            Twin x = twin_randn({kN, kC, kHW, kHW}), g = twin_randn({kN, kC, kHW, kHW});
            Twin w = twin_randn({kC}), b = twin_randn({kC});
            kiln::Tensor krm = kiln::zeros({kC}), krv = kiln::ones({kC});
            at::Tensor trm = at::zeros({kC}), trv = at::ones({kC});
            if (!backward)
              return Prepared{
                  [=] { kiln::Tensor r = kiln::batch_norm(x.k, w.k, b.k, krm, krv, true, 0.1, 1e-5, true); },
                  [=] { at::Tensor r = at::batch_norm(x.t, w.t, b.t, trm, trv, true, 0.1, 1e-5, false); }};
            kiln::Tensor kx = x.k.detach().requires_grad_(true), kw = w.k.detach().requires_grad_(true),
                         kb = b.k.detach().requires_grad_(true);
            at::Tensor tx = x.t.detach().requires_grad_(true), tw = w.t.detach().requires_grad_(true),
                       tb = b.t.detach().requires_grad_(true);
            return Prepared{[=] { kiln::batch_norm(kx, kw, kb, krm, krv, true, 0.1, 1e-5, true).backward(g.k); },
                            [=] { at::batch_norm(tx, tw, tb, trm, trv, true, 0.1, 1e-5, false).backward(g.t); }};
          }};
}

Case group_norm_case(bool backward) {
  constexpr int64_t kGroups = 32;
  const double bytes = double(kN * kC * kHW * kHW) * 4 * (backward ? 5 : 3);  // reads and writes, once each
  return {backward ? "group_norm [32,64,56,56] groups 32 fwd+bwd" : "group_norm [32,64,56,56] groups 32 fwd", "nn",
          bytes, 0, "", [backward] {
            Twin x = twin_randn({kN, kC, kHW, kHW}), g = twin_randn({kN, kC, kHW, kHW});
            Twin w = twin_randn({kC}), b = twin_randn({kC});
            if (!backward)
              return Prepared{[=] { kiln::Tensor r = kiln::group_norm(x.k, kGroups, w.k, b.k, 1e-5); },
                              [=] { at::Tensor r = at::group_norm(x.t, kGroups, w.t, b.t, 1e-5); }};
            kiln::Tensor kx = x.k.detach().requires_grad_(true), kw = w.k.detach().requires_grad_(true),
                         kb = b.k.detach().requires_grad_(true);
            at::Tensor tx = x.t.detach().requires_grad_(true), tw = w.t.detach().requires_grad_(true),
                       tb = b.t.detach().requires_grad_(true);
            return Prepared{[=] { kiln::group_norm(kx, kGroups, kw, kb, 1e-5).backward(g.k); },
                            [=] { at::group_norm(tx, kGroups, tw, tb, 1e-5).backward(g.t); }};
          }};
}

struct KilnCnn {
  std::vector<kiln::Tensor> p, running;
  std::unique_ptr<kiln::optim::Adam> opt;
  kiln::Tensor x, y;
  void step() {
    using namespace kiln;
    Tensor h = conv2d(x, p[0], p[1], {1}, {1});
    h = max_pool2d(relu(batch_norm(h, p[2], p[3], running[0], running[1], true, 0.1, 1e-5, true)), {2});
    h = conv2d(h, p[4], p[5], {1}, {1});
    h = max_pool2d(relu(batch_norm(h, p[6], p[7], running[2], running[3], true, 0.1, 1e-5, true)), {2});
    Tensor loss = cross_entropy(linear(h.flatten(1), p[8], p[9]), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
};

struct TorchCnn {
  std::vector<at::Tensor> p, running;
  std::unique_ptr<torch::optim::Adam> opt;
  at::Tensor x, y;
  void step() {
    at::Tensor h = at::conv2d(x, p[0], p[1], {1}, {1});
    h = at::max_pool2d(at::relu(at::batch_norm(h, p[2], p[3], running[0], running[1], true, 0.1, 1e-5, false)), {2});
    h = at::conv2d(h, p[4], p[5], {1}, {1});
    h = at::max_pool2d(at::relu(at::batch_norm(h, p[6], p[7], running[2], running[3], true, 0.1, 1e-5, false)), {2});
    at::Tensor loss = at::cross_entropy_loss(at::linear(h.flatten(1), p[8], p[9]), y);
    for (at::Tensor& w : p) w.mutable_grad().reset();  // set_to_none, as kiln's zero_grad
    loss.backward();
    opt->step();
  }
};

Case cnn_step() {
  return {"CNN training step (digits demo's model, batch 64)", "training", 0, 0, "", [] {
            TwinParams w;  // the demo's order: conv1, bn1, conv2, bn2, fc (weight, bias each)
            w.add({16, 1, 3, 3}, 1.0 / 3), w.add({16}, 0.1);
            w.add({16}, 0.0, 1.0), w.add({16}, 0.0);
            w.add({32, 16, 3, 3}, 1.0 / 12), w.add({32}, 0.1);
            w.add({32}, 0.0, 1.0), w.add({32}, 0.0);
            w.add({kClasses, 128}, 1.0 / std::sqrt(128.0)), w.add({kClasses}, 0.1);
            auto k = std::make_shared<KilnCnn>();
            auto t = std::make_shared<TorchCnn>();
            k->p = w.k;
            t->p = w.t;
            for (int64_t c : {16, 32}) {
              k->running.push_back(kiln::zeros({c})), k->running.push_back(kiln::ones({c}));
              t->running.push_back(at::zeros({c})), t->running.push_back(at::ones({c}));
            }
            Twin x = twin_randn({kBatch, 1, 8, 8});
            kiln::Tensor y = kiln::randint(0, kClasses, {kBatch});
            k->x = x.k, k->y = y;
            t->x = x.t, t->y = to_torch(y);
            k->opt = std::make_unique<kiln::optim::Adam>(k->p, kiln::optim::AdamOptions{0.005});
            t->opt = std::make_unique<torch::optim::Adam>(t->p, torch::optim::AdamOptions(0.005));
            return Prepared{[k] { k->step(); }, [t] { t->step(); }};
          }};
}

}  // namespace

std::vector<Case> cnn_cases() {
  return {batch_norm_case(false), batch_norm_case(true), group_norm_case(false), group_norm_case(true), cnn_step()};
}

}  // namespace kiln_bench
