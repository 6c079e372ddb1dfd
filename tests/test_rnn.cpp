// Recurrent layers beyond the generated tests: kiln::lstm and kiln::gru against torch.nn.LSTM/GRU
// (PyTorch 1.13, float64: tests/reference/rnn/layers.json, made by
// tools/make_rnn_layer_references.py) over 2 layers, both directions, batch_first both ways, with
// and without biases and unbatched, outputs and every gradient; the fused gates' create_graph
// gradients; inter-layer dropout; and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>
#include "kiln/autocast.h"
#include "kiln/autograd.h"
#include "kiln/core.h"
#include "support/op_catalog.h"
#include "support/tensor_json.h"
#include "support/test_helpers.h"
#include "kiln/gen/api/_thnn_fused_gru_cell.h"
#include "kiln/gen/api/_thnn_fused_gru_cell_backward.h"
#include "kiln/gen/api/_thnn_fused_lstm_cell.h"
#include "kiln/gen/api/_thnn_fused_lstm_cell_backward_impl.h"
#include "kiln/gen/api/cos.h"
#include "kiln/gen/api/gru.h"
#include "kiln/gen/api/gru_cell.h"
#include "kiln/gen/api/lstm.h"
#include "kiln/gen/api/lstm_cell.h"
#include "kiln/gen/api/rnn_relu_cell.h"
#include "kiln/gen/api/rnn_tanh.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/sin.h"
#include "kiln/gen/api/relu.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;
using json = nlohmann::json;

namespace {

const json& layer_cases() {
  static const json cases = kiln::testing::reference_cases("tests/reference/rnn/layers.json");
  return cases;
}

Tensor from_json(const json& t) { return kiln::testing::tensor_from_json(t, Device()); }

void expect_json(const Tensor& actual, const json& expected, const std::string& what) {
  INFO(what);
  const Tensor want = from_json(expected);
  expect_values(actual, want.sizes().vec(), want.to_vector<double>(), 1e-10);
}

// sum(t * cos(freq * k)) over t's flat index k: the reference's loss terms.
Tensor weighted_sum(const Tensor& t, double freq) {
  return (t * kiln::cos(arange(t.numel(), DType::Float64) * freq).reshape(t.sizes())).sum();
}

std::string describe(const json& c) {
  return c.at("kind").get<std::string>() + " layers=" + std::to_string(c.at("num_layers").get<int>()) +
         " bidirectional=" + std::to_string(c.at("bidirectional").get<bool>()) +
         " batch_first=" + std::to_string(c.at("batch_first").get<bool>()) +
         " biases=" + std::to_string(c.at("has_biases").get<bool>()) +
         " input=" + shape_str(from_json(c.at("input")).sizes());
}

// Small float64 tensors of a fixed pattern for the cell tests.
Tensor wave(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (kiln::sin(arange(n, DType::Float64) * 0.37 + phase) * 0.5).reshape(shape);
}

}  // namespace

TEST_CASE("lstm and gru: outputs and gradients equal torch.nn.LSTM / GRU") {
  REQUIRE(layer_cases().size() == 10);
  for (const json& c : layer_cases()) {
    INFO(describe(c));
    const bool is_lstm = c.at("kind") == "lstm";
    const Tensor input = from_json(c.at("input")).requires_grad_(true);
    TensorList hx, params;
    for (const json& t : c.at("hx")) hx.push_back(from_json(t).requires_grad_(true));
    for (const json& t : c.at("params")) params.push_back(from_json(t).requires_grad_(true));
    const bool biases = c.at("has_biases"), bidirectional = c.at("bidirectional"), batch_first = c.at("batch_first");
    const int64_t layers = c.at("num_layers");
    Tensor output, h_n, c_n;
    if (is_lstm) {
      std::tie(output, h_n, c_n) = kiln::lstm(input, hx, params, biases, layers, 0.0, true, bidirectional, batch_first);
    } else {
      std::tie(output, h_n) = kiln::gru(input, hx[0], params, biases, layers, 0.0, true, bidirectional, batch_first);
    }
    expect_json(output, c.at("output"), "output");
    expect_json(h_n, c.at("h_n"), "h_n");
    if (is_lstm) expect_json(c_n, c.at("c_n"), "c_n");
    Tensor loss = weighted_sum(output, 0.11) + weighted_sum(h_n, 0.23);
    if (is_lstm) loss = loss + weighted_sum(c_n, 0.23);
    TensorList inputs{input};
    for (const Tensor& h : hx) inputs.push_back(h);
    for (const Tensor& p : params) inputs.push_back(p);
    const TensorList grads = autograd::grad({loss}, inputs);
    expect_json(grads[0], c.at("grad_input"), "grad input");
    for (size_t i = 0; i < hx.size(); ++i)
      expect_json(grads[1 + i], c.at("grad_hx")[i], "grad hx " + std::to_string(i));
    for (size_t i = 0; i < params.size(); ++i)
      expect_json(grads[1 + hx.size() + i], c.at("grad_params")[i], "grad param " + std::to_string(i));
  }
}

TEST_CASE("fused lstm cell: create_graph gradients equal the kernel's and differentiate again") {
  const Tensor ig = wave({3, 8}, 0.2).requires_grad_(true), hg = wave({3, 8}, 1.3).requires_grad_(true);
  const Tensor cx = wave({3, 2}, 2.1).requires_grad_(true), ib = wave({8}, 0.4), hb = wave({8}, 0.9);
  const Tensor g_h = wave({3, 2}, 0.6), g_c = wave({3, 2}, 1.7);
  auto run = [&](bool create_graph) {
    auto [hy, cy, ws] = kiln::_thnn_fused_lstm_cell(ig, hg, cx, ib, hb);
    return autograd::grad({hy, cy}, {ig, hg, cx}, {g_h, g_c}, std::nullopt, create_graph);
  };
  const TensorList plain = run(false), graphed = run(true);
  for (size_t i = 0; i < 3; ++i) {
    INFO("gradient " << i);
    expect_values(graphed[i], plain[i].sizes().vec(), plain[i].to_vector<double>(), 1e-12);
  }
  CHECK(graphed[0].requires_grad());
  // input_gates and hidden_gates get the same gradient, the bias's is its column sums
  expect_values(plain[1], {3, 8}, plain[0].to_vector<double>(), 0);
  auto [grad_gates, grad_cx, grad_bias] = kiln::_thnn_fused_lstm_cell_backward_impl(
      g_h, g_c, cx, std::get<1>(kiln::_thnn_fused_lstm_cell(ig, hg, cx, ib, hb)),
      std::get<2>(kiln::_thnn_fused_lstm_cell(ig, hg, cx, ib, hb)), true);
  expect_values(grad_bias, {8}, plain[0].sum(IntArrayRef{0}).to_vector<double>(), 1e-12);
  CHECK(autograd::grad({(graphed[0] * graphed[0]).sum() + graphed[2].sum()}, {ig, cx})[0].defined());
}

TEST_CASE("fused gru cell: create_graph gradients equal the kernel's, the backward's five results") {
  const Tensor ig = wave({3, 6}, 0.2).requires_grad_(true), hg = wave({3, 6}, 1.3).requires_grad_(true);
  const Tensor hx = wave({3, 2}, 2.1).requires_grad_(true), ib = wave({6}, 0.4).requires_grad_(true);
  const Tensor g = wave({3, 2}, 0.6);
  auto run = [&](bool create_graph) {
    return autograd::grad({std::get<0>(kiln::_thnn_fused_gru_cell(ig, hg, hx, ib, Tensor()))}, {ig, hg, hx, ib}, {g},
                          std::nullopt, create_graph);
  };
  const TensorList plain = run(false), graphed = run(true);
  for (size_t i = 0; i < 4; ++i) {
    INFO("gradient " << i);
    expect_values(graphed[i], plain[i].sizes().vec(), plain[i].to_vector<double>(), 1e-12);
  }
  const Tensor ws = std::get<1>(kiln::_thnn_fused_gru_cell(ig, hg, hx, ib, Tensor()));
  auto [gi, gh, ghx, gbi, gbh] = kiln::_thnn_fused_gru_cell_backward(g, ws, true);
  expect_values(gi, {3, 6}, plain[0].to_vector<double>(), 1e-12);
  expect_values(gh, {3, 6}, plain[1].to_vector<double>(), 1e-12);
  expect_values(gbi, {6}, plain[3].to_vector<double>(), 1e-12);
  CHECK(gbh.defined());
  auto no_bias = kiln::_thnn_fused_gru_cell_backward(g, ws, false);
  // empty where PyTorch returns None: kiln's ops never return an undefined tensor (the fuzzer checks)
  CHECK(std::get<3>(no_bias).numel() == 0);
  CHECK(std::get<4>(no_bias).numel() == 0);
}

TEST_CASE("cells: unbatched input is the batch of one, squeezed") {
  const Tensor x = wave({4}, 0.1), h = wave({2}, 0.5), c = wave({2}, 0.9);
  const Tensor w_ih = wave({8, 4}, 1.0), w_hh = wave({8, 2}, 2.0), b = wave({8}, 3.0);
  auto [hy, cy] = kiln::lstm_cell(x, {h, c}, w_ih, w_hh, b, b);
  auto [hy1, cy1] = kiln::lstm_cell(x.unsqueeze(0), {h.unsqueeze(0), c.unsqueeze(0)}, w_ih, w_hh, b, b);
  expect_values(hy, {2}, hy1.to_vector<double>(), 0);
  expect_values(cy, {2}, cy1.to_vector<double>(), 0);
  const Tensor g = kiln::gru_cell(x, h, wave({6, 4}, 1.0), wave({6, 2}, 2.0));
  CHECK(g.sizes().vec() == std::vector<int64_t>{2});
  // relu cell by hand: relu(x w_ih^T + h w_hh^T)
  const Tensor r = kiln::rnn_relu_cell(x, h, wave({2, 4}, 1.0), wave({2, 2}, 2.0));
  const Tensor want = kiln::relu(kiln::matmul(wave({2, 4}, 1.0), x) + kiln::matmul(wave({2, 2}, 2.0), h));
  expect_values(r, {2}, want.to_vector<double>(), 1e-12);
}

TEST_CASE("rnn_tanh: inter-layer dropout runs only when training, from kiln's generator") {
  const Tensor x = wave({6, 2, 3}, 0.3), h0 = wave({2, 2, 4}, 0.8);
  TensorList params;
  for (int layer = 0; layer < 2; ++layer) {
    params.push_back(wave({4, layer == 0 ? 3 : 4}, 1.0 + layer));
    params.push_back(wave({4, 4}, 2.0 + layer));
  }
  auto eval = kiln::rnn_tanh(x, h0, params, false, 2, 0.5, false, false, false);
  auto plain = kiln::rnn_tanh(x, h0, params, false, 2, 0.0, true, false, false);
  expect_values(std::get<0>(eval), {6, 2, 4}, std::get<0>(plain).to_vector<double>(), 0);
  manual_seed(5);
  auto a = kiln::rnn_tanh(x, h0, params, false, 2, 0.5, true, false, false);
  manual_seed(5);
  auto b = kiln::rnn_tanh(x, h0, params, false, 2, 0.5, true, false, false);
  expect_values(std::get<0>(a), {6, 2, 4}, std::get<0>(b).to_vector<double>(), 0);
  CHECK_FALSE(kiln::testing::same_values(std::get<0>(a), std::get<0>(plain)));
}

TEST_CASE("rnn ops: wrong shapes and counts raise kiln's typed errors naming the op and argument") {
  const Tensor x = wave({5, 2, 3}, 0.1), h0 = wave({1, 2, 2}, 0.2);
  const TensorList params{wave({8, 3}, 0.3), wave({8, 2}, 0.4), wave({8}, 0.5), wave({8}, 0.6)};
  std::string m = error_text<ValueError>([&] { kiln::lstm(x, {h0, h0}, params, true, 2, 0.0, false, false, false); });
  CHECK(has(m, "kiln::lstm"));
  CHECK(has(m, "'params'"));
  m = error_text<ShapeError>([&] {
    kiln::lstm(wave({5, 2, 4}, 0.1), {h0, h0}, params, true, 1, 0.0, false, false, false);
  });
  CHECK(has(m, "'input'"));
  CHECK(has(m, "input_size"));
  m = error_text<ShapeError>([&] {
    kiln::lstm(x, {wave({1, 3, 2}, 0.2), h0}, params, true, 1, 0.0, false, false, false);
  });
  CHECK(has(m, "'hx'"));
  m = error_text<ShapeError>([&] {
    kiln::gru(x, h0, {wave({8, 3}, 0.3), wave({8, 2}, 0.4)}, false, 1, 0.0, false, false, false);  // 4H rows for a GRU
  });
  CHECK(has(m, "kiln::gru"));
  CHECK(has(m, "'params'"));
  m = error_text<ValueError>([&] { kiln::lstm(x, {h0}, params, true, 1, 0.0, false, false, false); });
  CHECK(has(m, "'hx'"));
  m = error_text<ShapeError>([&] {
    kiln::_thnn_fused_lstm_cell(wave({3, 6}, 0.1), wave({3, 6}, 0.2), wave({3, 2}, 0.3));
  });
  CHECK(has(m, "kiln::_thnn_fused_lstm_cell"));
  CHECK(has(m, "'input_gates'"));
  m = error_text<ShapeError>([&] {
    kiln::_thnn_fused_gru_cell(wave({3, 6}, 0.1), wave({3, 6}, 0.2), wave({3, 2}, 0.3), wave({9}, 0.1));
  });
  CHECK(has(m, "'input_bias'"));
  m = error_text<ShapeError>([&] {
    kiln::gru_cell(wave({3, 4}, 0.1), wave({2, 2}, 0.2), wave({6, 4}, 0.3), wave({6, 2}, 0.4));
  });
  CHECK(has(m, "kiln::gru_cell"));
  CHECK(has(m, "batch size"));
  m = error_text<ShapeError>([&] {
    kiln::lstm_cell(wave({3, 4, 1}, 0.1), {wave({3, 2}, 0.2), wave({3, 2}, 0.2)}, wave({8, 4}, 0.3), wave({8, 2}, 0.4));
  });
  CHECK(has(m, "'input'"));
}

TEST_CASE("lstm_cell and gru: a CPU autocast region runs the projections in bfloat16, the gates in the state's dtype") {
  const Tensor x = wave({3, 4}, 0.1).to(DType::Float32), h = wave({3, 2}, 0.5).to(DType::Float32);
  const Tensor c = wave({3, 2}, 0.9).to(DType::Float32);
  const Tensor w_ih = wave({8, 4}, 1.0).to(DType::Float32), w_hh = wave({8, 2}, 2.0).to(DType::Float32);
  auto [hy32, cy32] = kiln::lstm_cell(x, {h, c}, w_ih, w_hh);
  AutocastGuard region(DeviceType::CPU);
  auto [hy, cy] = kiln::lstm_cell(x, {h, c}, w_ih, w_hh);
  CHECK(hy.dtype() == DType::Float32);
  expect_values(hy, {3, 2}, hy32.to_vector<double>(), 2e-2);
  expect_values(cy, {3, 2}, cy32.to_vector<double>(), 2e-2);
  const TensorList params{wave({6, 4}, 1.0).to(DType::Float32), wave({6, 2}, 2.0).to(DType::Float32)};
  auto [out, h_n] = kiln::gru(wave({5, 3, 4}, 0.3).to(DType::Float32), wave({1, 3, 2}, 0.4).to(DType::Float32), params,
                              false, 1, 0.0, false, false, false);
  CHECK(out.dtype() == DType::Float32);
  CHECK(h_n.sizes().vec() == std::vector<int64_t>{1, 3, 2});
}
