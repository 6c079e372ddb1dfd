// kiln's side of the CUDA benchmark: the cases of cases.json timed on the GPU, one JSON line per
// case on stdout. torch_cuda_bench.py times the same cases with PyTorch on the same machine and
// compare.py pairs the two (libtorch with CUDA is not in Debian, so the two sides run as two
// processes, one after the other, with the same timing rule; see bench/cuda/README.md).
//
// Timing rule (both sides): warm up, calibrate a loop of calls to ~5 ms, then time `samples`
// loops, each closed by a device synchronize; the median seconds per call is reported.
#include <kiln/cuda.h>
#include <kiln/kiln.h>
#include <kiln/optim.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../kiln_mlp.h"

namespace {

using Clock = std::chrono::steady_clock;
const kiln::Device kCuda("cuda:0");

struct Case {
  std::string name;
  double bytes = 0;  // memory traffic of one call, 0 when not meaningful
  double flops = 0;  // floating-point work of one call, 0 when not meaningful
  std::function<std::function<void()>()> prepare;
};

kiln::Tensor randn(std::vector<int64_t> sizes, kiln::DType dtype = kiln::kFloat32) {
  return kiln::randn(sizes, kiln::TensorOptions(kiln::kFloat32, kCuda)).to(dtype);
}

double seconds_of(const std::function<void()>& fn, int64_t iters) {
  kiln::cuda::synchronize();
  auto t0 = Clock::now();
  for (int64_t i = 0; i < iters; ++i) fn();
  kiln::cuda::synchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median_seconds_per_call(const std::function<void()>& fn, int samples) {
  for (int i = 0; i < 3; ++i) fn();
  int64_t iters = 1;
  while (seconds_of(fn, iters) < 0.005 && iters < (int64_t(1) << 20)) iters *= 2;
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) per_call.push_back(seconds_of(fn, iters) / double(iters));
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

constexpr int64_t kN = int64_t(1) << 24;  // 16M elements
constexpr double kF32 = 4.0;

Case unary(const std::string& name, std::function<kiln::Tensor(const kiln::Tensor&)> op) {
  return {name + " 16M", 2 * kN * kF32, 0, [op] {
            kiln::Tensor x = randn({kN});
            return std::function<void()>([x, op] { kiln::Tensor r = op(x); });
          }};
}

Case mm_case(const std::string& name, int64_t n, kiln::DType dtype, bool tf32) {
  return {name, 0, 2.0 * n * n * n, [n, dtype, tf32] {
            kiln::Tensor a = randn({n, n}, dtype), b = randn({n, n}, dtype);
            return std::function<void()>([a, b, tf32] {
              kiln::cuda::set_allow_tf32(tf32);
              kiln::Tensor r = kiln::mm(a, b);
              kiln::cuda::set_allow_tf32(false);
            });
          }};
}

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"add 1 element (launch overhead)", 0, 0, [] {
                 kiln::Tensor x = randn({1}), y = randn({1});
                 return std::function<void()>([x, y] { kiln::Tensor r = x + y; });
               }});
  c.push_back({"add 16M", 3 * kN * kF32, 0, [] {
                 kiln::Tensor x = randn({kN}), y = randn({kN});
                 return std::function<void()>([x, y] { kiln::Tensor r = x + y; });
               }});
  c.push_back({"add 16M, out=", 3 * kN * kF32, 0, [] {
                 kiln::Tensor x = randn({kN}), y = randn({kN}), out = randn({kN});
                 return std::function<void()>([x, y, out]() mutable { kiln::add_out(out, x, y); });
               }});
  c.push_back({"broadcast add [4096,4096]+[4096]", 2 * kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096}), row = randn({4096});
                 return std::function<void()>([x, row] { kiln::Tensor r = x + row; });
               }});
  c.push_back({"transposed add a.t()+b [4096,4096]", 3 * kN * kF32, 0, [] {
                 kiln::Tensor a = randn({4096, 4096}), b = randn({4096, 4096});
                 return std::function<void()>([a, b] { kiln::Tensor r = a.t() + b; });
               }});
  c.push_back(unary("relu", [](const kiln::Tensor& x) { return kiln::relu(x); }));
  c.push_back(unary("exp", [](const kiln::Tensor& x) { return kiln::exp(x); }));
  c.push_back(unary("tanh", [](const kiln::Tensor& x) { return kiln::tanh(x); }));
  c.push_back(unary("sigmoid", [](const kiln::Tensor& x) { return kiln::sigmoid(x); }));
  c.push_back(unary("gelu", [](const kiln::Tensor& x) { return kiln::gelu(x); }));
  c.push_back({"cast float32->bfloat16 16M", kN * (kF32 + 2), 0, [] {
                 kiln::Tensor x = randn({kN});
                 return std::function<void()>([x] { kiln::Tensor r = x.to(kiln::kBFloat16); });
               }});
  c.push_back({"contiguous of a transpose [4096,4096]", 2 * kN * kF32, 0, [] {
                 kiln::Tensor a = randn({4096, 4096});
                 return std::function<void()>([a] { kiln::Tensor r = a.t().contiguous(); });
               }});
  c.push_back({"sum 16M", kN * kF32, 0, [] {
                 kiln::Tensor x = randn({kN});
                 return std::function<void()>([x] { kiln::Tensor r = x.sum(); });
               }});
  c.push_back({"sum dim=1 [4096,4096]", kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096});
                 return std::function<void()>([x] { kiln::Tensor r = x.sum(1); });
               }});
  c.push_back({"sum dim=0 [4096,4096]", kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096});
                 return std::function<void()>([x] { kiln::Tensor r = x.sum(0); });
               }});
  c.push_back({"max dim=1 [4096,4096]", kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096});
                 return std::function<void()>([x] { auto r = kiln::max(x, 1); });
               }});
  c.push_back({"softmax dim=-1 [4096,4096]", 2 * kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096});
                 return std::function<void()>([x] { kiln::Tensor r = kiln::softmax(x, -1); });
               }});
  c.push_back({"cumsum dim=1 [4096,4096]", 2 * kN * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 4096});
                 return std::function<void()>([x] { kiln::Tensor r = kiln::cumsum(x, 1); });
               }});
  c.push_back(mm_case("mm 4096 float32", 4096, kiln::kFloat32, false));
  c.push_back(mm_case("mm 4096 float32, TF32", 4096, kiln::kFloat32, true));
  c.push_back(mm_case("mm 4096 bfloat16", 4096, kiln::kBFloat16, false));
  c.push_back(mm_case("mm 8192 bfloat16", 8192, kiln::kBFloat16, false));
  c.push_back({"bmm [64,512,512] float32", 0, 2.0 * 64 * 512 * 512 * 512, [] {
                 kiln::Tensor a = randn({64, 512, 512}), b = randn({64, 512, 512});
                 return std::function<void()>([a, b] { kiln::Tensor r = kiln::bmm(a, b); });
               }});
  // NN layers (issue 16): layer_norm's fused kernels, conv2d (im2col + cuBLAS; PyTorch runs cuDNN)
  c.push_back({"layer_norm [4096,1024] fwd", 2 * 4096 * 1024 * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 1024}), w = randn({1024}), b = randn({1024});
                 return std::function<void()>([x, w, b] { kiln::Tensor r = kiln::layer_norm(x, {1024}, w, b); });
               }});
  c.push_back({"layer_norm [4096,1024] fwd+bwd", 5 * 4096 * 1024 * kF32, 0, [] {
                 kiln::Tensor x = randn({4096, 1024}).requires_grad_(), w = randn({1024}).requires_grad_(),
                              b = randn({1024}).requires_grad_(), g = randn({4096, 1024});
                 return std::function<void()>([x, w, b, g] {
                   kiln::TensorList r = kiln::autograd::grad({kiln::layer_norm(x, {1024}, w, b)}, {x, w, b}, {g});
                 });
               }});
  const double bn_elems = 32.0 * 64 * 56 * 56;
  c.push_back({"batch_norm training [32,64,56,56] fwd", 3 * bn_elems * kF32, 0, [] {
                 kiln::Tensor x = randn({32, 64, 56, 56}), w = randn({64}), b = randn({64});
                 kiln::Tensor rm = kiln::zeros({64}, kiln::TensorOptions(kiln::kFloat32, kCuda)),
                              rv = kiln::ones({64}, kiln::TensorOptions(kiln::kFloat32, kCuda));
                 return std::function<void()>(
                     [=] { kiln::Tensor r = kiln::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5, true); });
               }});
  c.push_back({"batch_norm training [32,64,56,56] fwd+bwd", 5 * bn_elems * kF32, 0, [] {
                 kiln::Tensor x = randn({32, 64, 56, 56}).requires_grad_(), w = randn({64}).requires_grad_(),
                              b = randn({64}).requires_grad_(), g = randn({32, 64, 56, 56});
                 kiln::Tensor rm = kiln::zeros({64}, kiln::TensorOptions(kiln::kFloat32, kCuda)),
                              rv = kiln::ones({64}, kiln::TensorOptions(kiln::kFloat32, kCuda));
                 return std::function<void()>([=] {
                   kiln::TensorList r =
                       kiln::autograd::grad({kiln::batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5, true)}, {x, w, b}, {g});
                 });
               }});
  for (kiln::DType dt : {kiln::kFloat32, kiln::kBFloat16}) {
    const std::string suffix = dt == kiln::kFloat32 ? " float32" : " bfloat16";
    const double flops = 2.0 * 16 * 64 * 56 * 56 * 64 * 9;
    c.push_back({"conv2d [16,64,56,56] x [64,64,3,3]" + suffix + " fwd", 0, flops, [dt] {
                   kiln::Tensor x = randn({16, 64, 56, 56}, dt), w = randn({64, 64, 3, 3}, dt), b = randn({64}, dt);
                   return std::function<void()>([x, w, b] { kiln::Tensor r = kiln::conv2d(x, w, b, {1}, {1}); });
                 }});
    c.push_back({"conv2d [16,64,56,56] x [64,64,3,3]" + suffix + " fwd+bwd", 0, 3 * flops, [dt] {
                   kiln::Tensor x = randn({16, 64, 56, 56}, dt).requires_grad_(),
                                w = randn({64, 64, 3, 3}, dt).requires_grad_(), b = randn({64}, dt).requires_grad_(),
                                g = randn({16, 64, 56, 56}, dt);
                   return std::function<void()>([x, w, b, g] {
                     kiln::TensorList r = kiln::autograd::grad({kiln::conv2d(x, w, b, {1}, {1})}, {x, w, b}, {g});
                   });
                 }});
  }
  const double attn_flops = 2.0 * 2 * 8 * 1024 * 1024 * 64 / 2;  // q k^T and P v, causal half
  c.push_back({"causal attention [8,1024,64] float32 fwd", 0, attn_flops, [] {
                 kiln::Tensor q = randn({8, 1024, 64}), k = randn({8, 1024, 64}), v = randn({8, 1024, 64});
                 return std::function<void()>(
                     [q, k, v] { kiln::Tensor r = kiln::scaled_dot_product_attention(q, k, v, {}, 0.0, true); });
               }});
  c.push_back({"causal attention [8,1024,64] float32 fwd+bwd", 0, 2.5 * attn_flops, [] {
                 kiln::Tensor q = randn({8, 1024, 64}).requires_grad_(), k = randn({8, 1024, 64}).requires_grad_(),
                              v = randn({8, 1024, 64}).requires_grad_(), g = randn({8, 1024, 64});
                 return std::function<void()>([q, k, v, g] {
                   kiln::TensorList r = kiln::autograd::grad(
                       {kiln::scaled_dot_product_attention(q, k, v, {}, 0.0, true)}, {q, k, v}, {g});
                 });
               }});
  // 16-bit: the fused op itself (the tensor-core flash kernels; scaled_dot_product_attention
  // still hands CUDA 16-bit inputs over as float32 copies until these have run on a device)
  for (kiln::DType dt : {kiln::kFloat16, kiln::kBFloat16}) {
    const std::string name = std::string("causal attention [8,1024,64] ") + kiln::dtype_name(dt);
    if (dt == kiln::kFloat16)
      c.push_back({name + " fwd", 0, attn_flops, [dt] {
                     kiln::Tensor q = randn({8, 1024, 64}, dt), k = randn({8, 1024, 64}, dt),
                                  v = randn({8, 1024, 64}, dt);
                     return std::function<void()>(
                         [q, k, v] { auto r = kiln::_scaled_dot_product_attention_fused(q, k, v, {}, true, 0.125); });
                   }});
    c.push_back({name + " fwd+bwd", 0, 2.5 * attn_flops, [dt] {
                   kiln::Tensor q = randn({8, 1024, 64}, dt), k = randn({8, 1024, 64}, dt),
                                v = randn({8, 1024, 64}, dt), g = randn({8, 1024, 64}, dt);
                   return std::function<void()>([q, k, v, g] {
                     auto [out, lse] = kiln::_scaled_dot_product_attention_fused(q, k, v, {}, true, 0.125);
                     auto r = kiln::_scaled_dot_product_attention_fused_backward(g, q, k, v, {}, out, lse, true, 0.125);
                   });
                 }});
  }
  c.push_back({"max_pool2d 3x3/2 [32,64,112,112]", 1.25 * 32 * 64 * 112 * 112 * kF32, 0, [] {
                 kiln::Tensor x = randn({32, 64, 112, 112});
                 return std::function<void()>([x] { kiln::Tensor r = kiln::max_pool2d(x, {3}, {2}, {1}); });
               }});
  c.push_back({"MLP training step 784-256-256-10, batch 128", 0, 0, [] {
                 auto m = std::make_shared<kiln_bench::KilnMlp>();
                 const int64_t dims[] = {784, 256, 256, 10};
                 for (int l = 0; l < 3; ++l) {
                   double scale = 1.0 / std::sqrt(double(dims[l]));
                   m->params.push_back((randn({dims[l + 1], dims[l]}) * scale).detach().requires_grad_());
                   m->params.push_back((randn({dims[l + 1]}) * scale).detach().requires_grad_());
                 }
                 m->x = randn({128, 784});
                 m->y = kiln::randint(0, 10, {128}, kiln::TensorOptions(kiln::kInt64, kCuda));
                 m->opt = std::make_unique<kiln::optim::SGD>(m->params, kiln::optim::SGDOptions{0.01});
                 return std::function<void()>([m] { m->step(); });
               }});
  // Last, as the mode stays on for what follows: cuDNN's algorithms timed once per shape
  // (PyTorch's side sets torch.backends.cudnn.benchmark for the same cases).
  for (kiln::DType dt : {kiln::kFloat32, kiln::kBFloat16}) {
    const std::string suffix = dt == kiln::kFloat32 ? " float32" : " bfloat16";
    const double flops = 2.0 * 16 * 64 * 56 * 56 * 64 * 9;
    c.push_back({"conv2d [16,64,56,56] x [64,64,3,3]" + suffix + " fwd, cudnn.benchmark", 0, flops, [dt] {
                   kiln::cuda::set_cudnn_benchmark(true);
                   kiln::Tensor x = randn({16, 64, 56, 56}, dt), w = randn({64, 64, 3, 3}, dt), b = randn({64}, dt);
                   return std::function<void()>([x, w, b] { kiln::Tensor r = kiln::conv2d(x, w, b, {1}, {1}); });
                 }});
    c.push_back({"conv2d [16,64,56,56] x [64,64,3,3]" + suffix + " fwd+bwd, cudnn.benchmark", 0, 3 * flops, [dt] {
                   kiln::cuda::set_cudnn_benchmark(true);
                   kiln::Tensor x = randn({16, 64, 56, 56}, dt).requires_grad_(),
                                w = randn({64, 64, 3, 3}, dt).requires_grad_(), b = randn({64}, dt).requires_grad_(),
                                g = randn({16, 64, 56, 56}, dt);
                   return std::function<void()>([x, w, b, g] {
                     kiln::TensorList r = kiln::autograd::grad({kiln::conv2d(x, w, b, {1}, {1})}, {x, w, b}, {g});
                   });
                 }});
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (!kiln::cuda::is_available()) {
    std::fprintf(stderr, "kiln_cuda_bench: no CUDA device (%s)\n", kiln::cuda::unavailable_reason().c_str());
    return 1;
  }
  int samples = argc > 1 ? std::atoi(argv[1]) : 11;
  for (const Case& c : cases()) {
    double s = median_seconds_per_call(c.prepare(), samples);
    std::printf("{\"case\": \"%s\", \"seconds\": %.9g, \"bytes\": %.17g, \"flops\": %.17g}\n", c.name.c_str(), s,
                c.bytes, c.flops);
    std::fflush(stdout);
  }
  return 0;
}
