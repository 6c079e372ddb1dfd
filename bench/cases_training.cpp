// One training step of an MLP (784-256-256-10, relu, batch 128, cross-entropy, backward,
// SGD update), the same weights and data on both sides; and an AdamW step alone over 16
// parameters of [512, 1024] with fixed gradients (kiln's fused _fused_adamw_, libtorch 1.13's
// torch::optim::AdamW: a sequence of in-place ops per parameter), and an SGD step with momentum
// and weight decay over the same (kiln's _fused_sgd_).
#include <kiln/kiln.h>
#include <kiln/optim.h>
#include <torch/torch.h>

#include <memory>
#include <utility>

#include "cases.h"
#include "kiln_mlp.h"
#include "twin.h"

namespace kiln_bench {
namespace {

struct TorchMlp {
  std::vector<at::Tensor> params;
  std::unique_ptr<torch::optim::SGD> opt;
  at::Tensor x, y;
  void step() {
    at::Tensor h = at::linear(x, params[0], params[1]).relu();
    h = at::linear(h, params[2], params[3]).relu();
    at::Tensor loss = at::cross_entropy_loss(at::linear(h, params[4], params[5]), y);
    // torch 1.13 zero_grad() fills with zeros; set_to_none like kiln by dropping the grads
    for (at::Tensor& p : params) p.mutable_grad().reset();
    loss.backward();
    opt->step();
  }
};

Case mlp_step() {
  // forward and weight-gradient products for all three layers, input gradients for the last two
  // (the data needs none): 155 MFLOP
  double flops = 2 * 2.0 * 128 * (784 * 256 + 256 * 256 + 256 * 10) + 2.0 * 128 * (256 * 256 + 256 * 10);
  return {"MLP training step 784-256-256-10, batch 128", "training", 0, flops, "", [] {
            auto k = std::make_shared<KilnMlp>();
            auto t = std::make_shared<TorchMlp>();
            const int64_t dims[] = {784, 256, 256, 10};
            for (int l = 0; l < 3; ++l) {
              Twin w = twin_randn({dims[l + 1], dims[l]}), b = twin_randn({dims[l + 1]});
              double scale = 1.0 / std::sqrt(double(dims[l]));
              for (Twin* p : {&w, &b}) {
                p->k = (p->k * scale).detach().requires_grad_();
                p->t = (p->t * scale).detach().requires_grad_();
                k->params.push_back(p->k);
                t->params.push_back(p->t);
              }
            }
            Twin x = twin_randn({128, 784});
            kiln::Tensor labels = kiln::randint(0, 10, {128});
            k->x = x.k;
            t->x = x.t;
            k->y = labels;
            t->y = to_torch(labels);
            k->opt = std::make_unique<kiln::optim::SGD>(k->params, kiln::optim::SGDOptions{0.01});
            t->opt = std::make_unique<torch::optim::SGD>(t->params, torch::optim::SGDOptions(0.01));
            return Prepared{[k] { k->step(); }, [t] { t->step(); }};
          }};
}

// The optimizer-step cases' parameters: 16 leaves of [512, 1024] with fixed gradients, the same
// on both sides (shared, so the timed closures keep them alive).
constexpr int kParams = 16;
constexpr int64_t kRows = 512, kCols = 1024;

std::pair<std::shared_ptr<std::vector<kiln::Tensor>>, std::shared_ptr<std::vector<at::Tensor>>> step_params() {
  auto kp = std::make_shared<std::vector<kiln::Tensor>>();
  auto tp = std::make_shared<std::vector<at::Tensor>>();
  for (int i = 0; i < kParams; ++i) {
    Twin w = twin_randn({kRows, kCols}), g = twin_randn({kRows, kCols});
    kp->push_back(w.k.detach().requires_grad_());
    kp->back().set_grad(g.k);
    tp->push_back(w.t.detach().requires_grad_());
    tp->back().mutable_grad() = g.t;
  }
  return {kp, tp};
}

Case adamw_step() {
  // per element: param, grad and both moments read, param and moments written
  const double bytes = double(kParams * kRows * kCols) * 4 * 7;
  return {"AdamW step, 16 params of [512,1024]", "training", bytes, 0, "", [] {
            const auto params = step_params();
            const auto kp = params.first;
            const auto tp = params.second;
            kiln::optim::AdamOptions options = kiln::optim::AdamW::defaults();  // weight_decay 0.01, as torch's
            options.lr = 1e-4;
            auto k = std::make_shared<kiln::optim::AdamW>(*kp, options);
            auto t = std::make_shared<torch::optim::AdamW>(*tp, torch::optim::AdamWOptions(1e-4));
            return Prepared{[k, kp] { k->step(); }, [t, tp] { t->step(); }};
          }};
}

Case sgd_step() {
  // per element: param, grad and the momentum buffer read, param and buffer written
  const double bytes = double(kParams * kRows * kCols) * 4 * 5;
  return {"SGD step (momentum 0.9, weight_decay 1e-4), 16 params of [512,1024]", "training", bytes, 0, "", [] {
            const auto params = step_params();
            const auto kp = params.first;
            const auto tp = params.second;
            kiln::optim::SGDOptions options{1e-4};
            options.momentum = 0.9, options.weight_decay = 1e-4;
            auto k = std::make_shared<kiln::optim::SGD>(*kp, options);
            auto t = std::make_shared<torch::optim::SGD>(
                *tp, torch::optim::SGDOptions(1e-4).momentum(0.9).weight_decay(1e-4));
            return Prepared{[k, kp] { k->step(); }, [t, tp] { t->step(); }};
          }};
}

}  // namespace

std::vector<Case> training_cases() { return {mlp_step(), adamw_step(), sgd_step()}; }

}  // namespace kiln_bench
