// Recurrent layers: a 1-layer LSTM and GRU over [seq 64, batch 32, input 256] with hidden 256,
// forward and forward + backward (input, state and weight gradients), float32. kiln projects
// every step's input with one matmul, then steps a [32, 256] x [256, 4H] matmul and the fused gate
// kernel; libtorch 1.13's CPU lstm/gru run the same math through its own cells.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <kiln/kiln.h>

#include "cases.h"
#include "twin.h"

namespace kiln_bench {
namespace {

constexpr int64_t kSeq = 64, kBatch = 32, kIn = 256, kHidden = 256;

// both steps' products (input and hidden projections), 2 flops per multiply-add
double rnn_flops(int64_t gates) { return 2.0 * kSeq * kBatch * gates * kHidden * (kIn + kHidden); }

struct RnnTwin {
  Twin x, h, c;
  std::vector<Twin> params;  // w_ih, w_hh, b_ih, b_hh
};

RnnTwin make(int64_t gates, bool grad) {
  RnnTwin r{twin_randn({kSeq, kBatch, kIn}), twin_randn({1, kBatch, kHidden}), twin_randn({1, kBatch, kHidden}), {}};
  for (auto sizes : std::vector<std::vector<int64_t>>{
           {gates * kHidden, kIn}, {gates * kHidden, kHidden}, {gates * kHidden}, {gates * kHidden}}) {
    Twin p = twin_randn(sizes);
    p.k = (p.k * 0.05).detach().requires_grad_(grad);
    p.t = to_torch(p.k.detach()).requires_grad_(grad);
    r.params.push_back(p);
  }
  if (grad) {
    r.x.k = r.x.k.detach().requires_grad_(true);
    r.x.t = r.x.t.detach().requires_grad_(true);
  }
  return r;
}

kiln::TensorList kiln_params(const RnnTwin& r) {
  kiln::TensorList out;
  for (const Twin& p : r.params) out.push_back(p.k);
  return out;
}
std::vector<at::Tensor> torch_params(const RnnTwin& r) {
  std::vector<at::Tensor> out;
  for (const Twin& p : r.params) out.push_back(p.t);
  return out;
}

Prepared lstm_case(bool backward) {
  RnnTwin r = make(4, backward);
  kiln::TensorList kp = kiln_params(r);
  std::vector<at::Tensor> tp = torch_params(r);
  return Prepared{[=] {
                    auto out = kiln::lstm(r.x.k, {r.h.k, r.c.k}, kp, true, 1, 0.0, backward, false, false);
                    if (backward) std::get<0>(out).sum().backward();
                  },
                  [=] {
                    auto out = at::lstm(r.x.t, {r.h.t, r.c.t}, tp, true, 1, 0.0, backward, false, false);
                    if (backward) std::get<0>(out).sum().backward();
                  }};
}

Prepared gru_case(bool backward) {
  RnnTwin r = make(3, backward);
  kiln::TensorList kp = kiln_params(r);
  std::vector<at::Tensor> tp = torch_params(r);
  return Prepared{[=] {
                    auto out = kiln::gru(r.x.k, r.h.k, kp, true, 1, 0.0, backward, false, false);
                    if (backward) std::get<0>(out).sum().backward();
                  },
                  [=] {
                    auto out = at::gru(r.x.t, r.h.t, tp, true, 1, 0.0, backward, false, false);
                    if (backward) std::get<0>(out).sum().backward();
                  }};
}

}  // namespace

std::vector<Case> rnn_cases() {
  return {
      {"lstm [64,32,256] h256 fwd", "nn", 0, rnn_flops(4), "", [] { return lstm_case(false); }},
      {"lstm [64,32,256] h256 fwd+bwd", "nn", 0, 3 * rnn_flops(4), "", [] { return lstm_case(true); }},
      {"gru [64,32,256] h256 fwd", "nn", 0, rnn_flops(3), "", [] { return gru_case(false); }},
      {"gru [64,32,256] h256 fwd+bwd", "nn", 0, 3 * rnn_flops(3), "", [] { return gru_case(true); }},
  };
}

}  // namespace kiln_bench
