// multi_head_attention_forward beyond the generated tests: outputs, attention weights and every
// gradient against torch.nn.functional.multi_head_attention_forward (PyTorch 1.13, float64:
// tests/reference/mha/cases.json, made by tools/make_mha_references.py) over batched and
// unbatched inputs, packed and separate projections, bias_k/bias_v, add_zero_attn, static_k/v,
// bool, byte and float masks, with and without weights; a gradcheck of both attention paths;
// dropout's draws; 16-bit inputs; and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kiln/autograd.h"
#include "kiln/core.h"
#include "kiln/gen/api/cos.h"
#include "kiln/gen/api/multi_head_attention_forward.h"
#include "kiln/gen/api/sin.h"
#include "kiln/generator.h"
#include "support/gradcheck.h"
#include "support/op_catalog.h"
#include "support/tensor_json.h"
#include "support/test_helpers.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::expect_values;
using kiln::testing::has;
using json = nlohmann::json;

namespace {

const json& mha_cases() {
  static const json cases = kiln::testing::reference_cases("tests/reference/mha/cases.json");
  return cases;
}

// Small float64 tensors of a fixed pattern.
Tensor wave(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (kiln::sin(arange(n, DType::Float64) * 0.37 + phase) * 0.5).reshape(shape);
}

// sum(t * cos(freq * k)) over t's flat index k: the reference's loss terms.
Tensor weighted_sum(const Tensor& t, double freq) {
  return (t * kiln::cos(arange(t.numel(), DType::Float64) * freq).reshape(t.sizes())).sum();
}

// Every argument of one call, PyTorch's defaults where it has them.
struct Mha {
  Tensor query, key, value;
  int64_t embed_dim_to_check = 4, num_heads = 2;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v;
  bool add_zero_attn = false;
  double dropout_p = 0.0;
  Tensor out_proj_weight, out_proj_bias;
  bool training = true;
  Tensor key_padding_mask;
  bool need_weights = true;
  Tensor attn_mask;
  bool use_separate_proj_weight = false;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v;
  bool average_attn_weights = true;

  std::tuple<Tensor, Tensor> operator()() const {
    return kiln::multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                              in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                                              out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                                              use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                                              static_k, static_v, average_attn_weights);
  }
  // The float tensors autograd differentiates (not the masks), each once.
  std::vector<std::pair<std::string, Tensor*>> leaves() {
    std::vector<std::pair<std::string, Tensor*>> all{{"query", &query},
                                                     {"key", &key},
                                                     {"value", &value},
                                                     {"in_proj_weight", &in_proj_weight},
                                                     {"in_proj_bias", &in_proj_bias},
                                                     {"bias_k", &bias_k},
                                                     {"bias_v", &bias_v},
                                                     {"out_proj_weight", &out_proj_weight},
                                                     {"out_proj_bias", &out_proj_bias},
                                                     {"q_proj_weight", &q_proj_weight},
                                                     {"k_proj_weight", &k_proj_weight},
                                                     {"v_proj_weight", &v_proj_weight},
                                                     {"static_k", &static_k},
                                                     {"static_v", &static_v}};
    std::vector<std::pair<std::string, Tensor*>> out;
    for (auto& [name, t] : all)
      if (t->defined() && !(name == "key" && t->is_same(query)) && !(name == "value" && t->is_same(key)))
        out.push_back({name, t});
    return out;
  }
};

// A valid batched call: L=3 queries, S=5 keys, N=2, E=4, 2 heads, packed weights with biases.
Mha basic() {
  Mha m;
  m.query = wave({3, 2, 4}, 1.1);
  m.key = wave({5, 2, 4}, 0.4);
  m.value = wave({5, 2, 4}, 2.0);
  m.in_proj_weight = wave({12, 4}, 0.3);
  m.in_proj_bias = wave({12}, 0.9);
  m.out_proj_weight = wave({4, 4}, 1.3);
  m.out_proj_bias = wave({4}, 0.2);
  return m;
}

Mha from_case(const json& c) {
  const json& a = c.at("args");
  auto tensor = [&](const char* name) {
    return a.at(name).is_null() ? Tensor() : kiln::testing::tensor_from_json(a.at(name), Device());
  };
  Mha m;
  m.query = tensor("query");
  m.key = c.at("same") == "qkv" ? m.query : tensor("key");
  m.value = c.at("same").is_null() ? tensor("value") : m.key;
  m.embed_dim_to_check = a.at("embed_dim_to_check");
  m.num_heads = a.at("num_heads");
  m.in_proj_weight = tensor("in_proj_weight");
  m.in_proj_bias = tensor("in_proj_bias");
  m.bias_k = tensor("bias_k");
  m.bias_v = tensor("bias_v");
  m.add_zero_attn = a.at("add_zero_attn");
  m.dropout_p = a.at("dropout_p");
  m.out_proj_weight = tensor("out_proj_weight");
  m.out_proj_bias = tensor("out_proj_bias");
  m.training = a.at("training");
  m.key_padding_mask = tensor("key_padding_mask");
  m.need_weights = a.at("need_weights");
  m.attn_mask = tensor("attn_mask");
  m.use_separate_proj_weight = a.at("use_separate_proj_weight");
  m.q_proj_weight = tensor("q_proj_weight");
  m.k_proj_weight = tensor("k_proj_weight");
  m.v_proj_weight = tensor("v_proj_weight");
  m.static_k = tensor("static_k");
  m.static_v = tensor("static_v");
  m.average_attn_weights = a.at("average_attn_weights");
  return m;
}

void expect_json(const Tensor& actual, const json& expected, const std::string& what) {
  INFO(what);
  const Tensor want = kiln::testing::tensor_from_json(expected, Device());
  expect_values(actual, want.sizes().vec(), want.to_vector<double>(), 1e-10);
}

std::string error_of(const Mha& m) {
  try {
    m();
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE(
    "multi_head_attention_forward: outputs, weights and gradients equal "
    "PyTorch 1.13's") {
  REQUIRE(mha_cases().size() == 15);
  for (const json& c : mha_cases()) {
    INFO(c.at("name").get<std::string>());
    Mha m = from_case(c);
    const bool grads = !c.at("grads").empty();
    auto leaves = m.leaves();
    if (grads)
      for (auto& [name, t] : leaves) t->requires_grad_(true);
    auto [output, weights] = m();
    expect_json(output, c.at("output"), "output");
    if (c.at("weights").is_null()) {
      // PyTorch's None: an empty tensor of the output's dtype
      REQUIRE(weights.defined());
      CHECK(weights.sizes().vec() == std::vector<int64_t>{0});
      CHECK(weights.dtype() == output.dtype());
    } else {
      expect_json(weights, c.at("weights"), "weights");
    }
    if (!grads) continue;
    Tensor loss = weighted_sum(output, 0.11);
    if (m.need_weights) loss = loss + weighted_sum(weights, 0.23);
    loss.backward();
    REQUIRE(leaves.size() == c.at("grads").size());
    for (const auto& leaf : leaves) {
      // no structured binding: INFO captures `name` in a lambda, which C++17 allows only for variables
      const std::string& name = leaf.first;
      Tensor* t = leaf.second;
      INFO("gradient of " << name);
      const json& want = c.at("grads").at(name);
      if (want.is_null()) {  // not used (key and value beside static_k, static_v)
        CHECK((!t->grad().defined() || t->grad().abs().max().item<double>() == 0));
      } else {
        expect_json(t->grad(), want, "grad " + name);
      }
    }
  }
}

TEST_CASE(
    "multi_head_attention_forward: gradcheck of the weights path and the "
    "blockwise path in float64") {
  for (bool need_weights : {true, false}) {
    INFO("need_weights " << need_weights);
    // separate projections (kdim 3, vdim 2), bias_k/bias_v, add_zero_attn and a float mask: every branch
    TensorList x0 = {wave({2, 1, 4}, 1.1), wave({3, 1, 3}, 0.4), wave({3, 1, 2}, 2.0), wave({4, 4}, 0.5),
                     wave({4, 3}, 0.6),    wave({4, 2}, 0.7),    wave({12}, 0.9),      wave({1, 1, 4}, 1.7),
                     wave({1, 1, 4}, 2.9), wave({4, 4}, 1.3),    wave({4}, 0.2)};
    const std::vector<std::string> names{"query",         "key",          "value",  "q_proj_weight", "k_proj_weight",
                                         "v_proj_weight", "in_proj_bias", "bias_k", "bias_v",        "out_proj_weight",
                                         "out_proj_bias"};
    const Tensor mask = wave({2, 3}, 0.3);
    kiln::testing::Fn f = [&](const TensorList& x) {
      Mha m;
      m.query = x[0];
      m.key = x[1];
      m.value = x[2];
      m.use_separate_proj_weight = true;
      m.q_proj_weight = x[3];
      m.k_proj_weight = x[4];
      m.v_proj_weight = x[5];
      m.in_proj_bias = x[6];
      m.bias_k = x[7];
      m.bias_v = x[8];
      m.out_proj_weight = x[9];
      m.out_proj_bias = x[10];
      m.add_zero_attn = true;
      m.attn_mask = mask;
      m.need_weights = need_weights;
      m.average_attn_weights = false;
      auto [out, w] = m();
      return need_weights ? TensorList{out, w} : TensorList{out};
    };
    size_t compared = 0;
    CHECK(kiln::testing::compare_jacobians(f, x0, names, kCPU, compared) == "");
    CHECK(compared > 0);
  }
}

TEST_CASE(
    "multi_head_attention_forward: unbatched input is the batch of one, "
    "squeezed") {
  Mha batched = basic();
  batched.query = wave({3, 1, 4}, 1.1);
  batched.key = wave({5, 1, 4}, 0.4);
  batched.value = wave({5, 1, 4}, 2.0);
  batched.key_padding_mask = kiln::tensor({0, 1, 0, 0, 0}).to(DType::Bool).reshape({1, 5});
  batched.average_attn_weights = false;
  Mha single = batched;
  single.query = batched.query.squeeze(1);
  single.key = batched.key.squeeze(1);
  single.value = batched.value.squeeze(1);
  single.key_padding_mask = batched.key_padding_mask.squeeze(0);
  auto [out_b, w_b] = batched();
  auto [out_s, w_s] = single();
  CHECK(out_s.sizes().vec() == std::vector<int64_t>{3, 4});
  CHECK(w_s.sizes().vec() == std::vector<int64_t>{2, 3, 5});
  expect_values(out_s, {3, 4}, out_b.squeeze(1).to_vector<double>(), 1e-12);
  expect_values(w_s, {2, 3, 5}, w_b.squeeze(0).to_vector<double>(), 1e-12);
}

TEST_CASE(
    "multi_head_attention_forward: dropout draws from kiln's generator "
    "when training, never in evaluation") {
  Mha m = basic();
  m.query = wave({16, 2, 4}, 1.1);
  m.key = wave({16, 2, 4}, 0.4);
  m.value = wave({16, 2, 4}, 2.0);
  m.average_attn_weights = false;
  auto [plain_out, plain_w] = m();  // dropout_p 0
  m.dropout_p = 0.5;
  m.training = false;
  auto [eval_out, eval_w] = m();
  CHECK(kiln::testing::same_values(eval_out, plain_out));
  CHECK(kiln::testing::same_values(eval_w, plain_w));

  m.training = true;
  kiln::manual_seed(7);
  auto [out, w] = m();
  CHECK(out.sizes().vec() == std::vector<int64_t>{16, 2, 4});
  REQUIRE(w.sizes().vec() == std::vector<int64_t>{2, 2, 16, 16});
  // the returned weights are the dropped ones: 0, or the probability over 1 - p
  const std::vector<double> got = w.to_vector<double>(), ref = plain_w.to_vector<double>();
  size_t zeros = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == 0)
      ++zeros;
    else
      CHECK(std::fabs(got[i] - 2 * ref[i]) <= 1e-12);
  }
  CHECK(zeros > got.size() * 35 / 100);
  CHECK(zeros < got.size() * 65 / 100);
  CHECK_FALSE(kiln::testing::same_values(out, plain_out));
  kiln::manual_seed(7);
  CHECK(kiln::testing::same_values(std::get<0>(m()), out));  // the same draws again

  // without weights the blockwise path drops too
  m.need_weights = false;
  kiln::manual_seed(7);
  auto [fast_out, fast_w] = m();
  CHECK(fast_out.sizes().vec() == std::vector<int64_t>{16, 2, 4});
  CHECK(fast_w.numel() == 0);
  CHECK_FALSE(kiln::testing::same_values(fast_out, plain_out));
  // the blockwise kernel drops the very probabilities the weights path drops
  expect_values(fast_out, {16, 2, 4}, out.to_vector<double>(), 1e-12);
  m.dropout_p = 1.5;
  CHECK(has(error_text<ValueError>([&] { m(); }), "'dropout_p'"));
}

TEST_CASE(
    "multi_head_attention_forward: PyTorch's checks raise kiln's typed "
    "errors naming the argument") {
  auto expect = [](Mha m, const std::string& kind, const std::string& arg) {
    const std::string e = error_of(m);
    INFO(e);
    CHECK(has(e, kind + ": kiln::multi_head_attention_forward"));
    CHECK(has(e, "'" + arg + "'"));
  };
  Mha m = basic();
  m.embed_dim_to_check = 5;
  expect(m, "ValueError", "embed_dim_to_check");
  m = basic();
  m.num_heads = 3;
  m.embed_dim_to_check = 4;
  expect(m, "ValueError", "num_heads");
  m = basic();
  m.num_heads = 0;
  expect(m, "ValueError", "num_heads");
  m = basic();
  m.query = wave({3, 2, 4, 1}, 0.0);
  expect(m, "ShapeError", "query");
  m = basic();
  m.key = wave({5, 4}, 0.0);
  expect(m, "ShapeError", "key");
  m = basic();
  m.value = wave({6, 2, 4}, 0.0);
  expect(m, "ShapeError", "key");  // key shape does not match value shape
  m = basic();
  m.attn_mask = kiln::zeros({3, 4}, DType::Float64);
  expect(m, "ShapeError", "attn_mask");
  m = basic();
  m.attn_mask = kiln::zeros({2, 3, 5}, DType::Float64);  // needs N * num_heads = 4
  expect(m, "ShapeError", "attn_mask");
  m = basic();
  m.attn_mask = kiln::zeros({1, 4, 3, 5}, DType::Float64);
  expect(m, "ShapeError", "attn_mask");
  m = basic();
  m.attn_mask = kiln::zeros({3, 5}, DType::Int32);
  expect(m, "DTypeError", "attn_mask");
  m = basic();
  m.key_padding_mask = kiln::zeros({2, 5}, DType::Int64);
  expect(m, "DTypeError", "key_padding_mask");
  m = basic();
  m.key_padding_mask = kiln::zeros({2, 4}, DType::Bool);
  expect(m, "ShapeError", "key_padding_mask");
  m = basic();
  // a float key_padding_mask with a float attn_mask: PyTorch's masked_fill refuses it
  m.key_padding_mask = kiln::zeros({2, 5}, DType::Float64);
  m.attn_mask = kiln::zeros({3, 5}, DType::Float64);
  expect(m, "DTypeError", "key_padding_mask");
  m = basic();
  m.bias_k = wave({1, 1, 4}, 0.0);
  expect(m, "ValueError", "bias_v");
  m = basic();
  m.bias_k = wave({1, 1, 3}, 0.0);
  m.bias_v = wave({1, 1, 4}, 0.0);
  expect(m, "ShapeError", "bias_k");
  m = basic();
  m.bias_k = wave({1, 1, 4}, 0.0);
  m.bias_v = wave({1, 1, 4}, 0.0);
  m.static_k = wave({4, 5, 2}, 0.0);
  expect(m, "ValueError", "static_k");
  m = basic();
  m.static_k = wave({2, 5, 2}, 0.0);  // needs N * num_heads = 4
  expect(m, "ShapeError", "static_k");
  m = basic();
  m.static_k = wave({4, 5, 3}, 0.0);  // needs head_dim 2
  expect(m, "ShapeError", "static_k");
  m = basic();
  m.static_v = wave({4, 6, 2}, 0.0);  // 5 keys, 6 values
  expect(m, "ShapeError", "static_v");
  m = basic();
  m.in_proj_weight = Tensor();
  expect(m, "ValueError", "in_proj_weight");
  m = basic();
  m.in_proj_weight = wave({12, 3}, 0.0);
  expect(m, "ShapeError", "in_proj_weight");
  m = basic();
  m.use_separate_proj_weight = true;
  m.q_proj_weight = wave({4, 4}, 0.0);
  m.v_proj_weight = wave({4, 4}, 0.0);
  expect(m, "ValueError", "k_proj_weight");
  m.k_proj_weight = wave({4, 3}, 0.0);
  expect(m, "ShapeError", "k_proj_weight");
  m = basic();
  m.out_proj_weight = wave({4, 3}, 0.0);
  expect(m, "ShapeError", "out_proj_weight");
  m = basic();
  m.query = wave({3, 4}, 0.0);
  m.key = wave({5, 4}, 0.0);
  m.value = wave({5, 4}, 0.0);
  m.attn_mask = kiln::zeros({4, 3, 5}, DType::Float64);  // unbatched 3-D: (num_heads, L, S)
  expect(m, "ShapeError", "attn_mask");
}

TEST_CASE("multi_head_attention_forward: 16-bit inputs compute in float32, rounded once") {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    INFO(dtype_name(dt));
    Mha m16 = basic();
    m16.query = m16.key = m16.value = wave({3, 2, 4}, 1.1).to(dt).requires_grad_(true);  // self-attention
    for (Tensor* t : {&m16.in_proj_weight, &m16.in_proj_bias, &m16.out_proj_weight, &m16.out_proj_bias}) *t = t->to(dt);
    m16.attn_mask = wave({3, 3}, 0.3).to(dt);
    Mha m32 = m16;
    m32.query = m32.key = m32.value = m16.query.detach().to(DType::Float32);
    for (Tensor* t : {&m32.in_proj_weight, &m32.in_proj_bias, &m32.out_proj_weight, &m32.out_proj_bias, &m32.attn_mask})
      *t = t->to(DType::Float32);
    auto [out16, w16] = m16();
    auto [out32, w32] = m32();
    CHECK(out16.dtype() == dt);
    CHECK(w16.dtype() == dt);
    CHECK(kiln::testing::same_values(out16, out32.to(dt)));
    CHECK(kiln::testing::same_values(w16, w32.to(dt)));
    out16.sum().backward();
    REQUIRE(m16.query.grad().defined());
    CHECK(m16.query.grad().dtype() == dt);
  }
}
