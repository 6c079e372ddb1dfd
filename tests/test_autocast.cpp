// Autocast (kiln/autocast.h) as torch.autocast in PyTorch 1.13: the dtypes ops return under a
// region by their registry policy, nesting and disabling, gradients arriving in the leaves'
// dtype, the weight cast cache, and the errors of a bad region.
#include <doctest/doctest.h>
#include <thread>
#include <vector>
#include "test_helpers.h"
#include "kiln/autocast.h"
#include "kiln/autograd.h"
#include "kiln/gen/api/binary_cross_entropy.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/conv2d.h"
#include "kiln/gen/api/cross_entropy.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/layer_norm.h"
#include "kiln/gen/api/linear.h"
#include "kiln/gen/api/matmul.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/nll_loss.h"
#include "kiln/gen/api/prod.h"
#include "kiln/gen/api/relu.h"
#include "kiln/gen/api/scaled_dot_product_attention.h"
#include "kiln/gen/api/sum.h"

using namespace kiln;
using testing::expect_values;

namespace {
constexpr DeviceType kCpuType = DeviceType::CPU;

Tensor values(std::vector<double> v, std::vector<int64_t> shape, DType dtype = kFloat32) {
  return from_vector<double>(v, shape).to(dtype);
}
Tensor leaf(std::vector<double> v, std::vector<int64_t> shape) {
  Tensor t = values(std::move(v), std::move(shape));
  t.requires_grad_(true);
  return t;
}
}  // namespace

TEST_CASE("autocast: each op's policy picks its result dtype on the CPU") {
  Tensor a = values({1, 2, 3, 4, 5, 6}, {2, 3}), b = values({1, 0, -1, 2, 0.5, 1}, {3, 2});
  AutocastGuard region(kCpuType);
  CHECK(is_autocast_cpu_enabled());
  CHECK_FALSE(is_autocast_enabled());  // the CUDA one
  // lower_precision: bfloat16, the CPU's only choice
  CHECK(mm(a, b).dtype() == kBFloat16);
  CHECK(matmul(a, b).dtype() == kBFloat16);
  CHECK(linear(a, b.t(), values({1, 2}, {2})).dtype() == kBFloat16);
  expect_values(mm(a, b), {2, 2}, {0.5, 7, 2, 16});  // exact in bfloat16
  // float32: a bfloat16 input comes back up
  Tensor logits = values({0.5, 1, -1, 2, 0, 0.25}, {2, 3}, kBFloat16);
  Tensor target = from_vector<int64_t>({2, 0}, {2});
  CHECK(cross_entropy(logits, target).dtype() == kFloat32);
  CHECK(prod(logits).dtype() == kFloat32);
  // promote: the widest floating input
  CHECK(cat({logits, a}).dtype() == kFloat32);
  CHECK(cat({logits, logits}).dtype() == kBFloat16);
  // a CUDA-only policy (exp, sum) leaves CPU tensors alone, as PyTorch's CPU lists
  CHECK(exp(a).dtype() == kFloat32);
  CHECK(sum(a).dtype() == kFloat32);
  // float64 and integer inputs are never cast
  CHECK(mm(a.to(kFloat64), b.to(kFloat64)).dtype() == kFloat64);
  CHECK(mm(a.to(kInt64), b.to(kInt64)).dtype() == kInt64);
  // ops without a policy run as written
  CHECK(relu(a).dtype() == kFloat32);
}

TEST_CASE("autocast: the NN layers' policies, as PyTorch's CPU lists") {
  AutocastGuard region(kCpuType);
  // lower_precision: convolutions and attention run in bfloat16
  Tensor x = ones({1, 2, 4, 4}), w = ones({3, 2, 3, 3}) * 0.5;
  CHECK(conv2d(x, w).dtype() == kBFloat16);
  Tensor q = ones({1, 2, 4, 8});
  CHECK(scaled_dot_product_attention(q, q, q).dtype() == kBFloat16);
  // float32: binary_cross_entropy takes bfloat16 probabilities up (CUDA's autocast refuses it)
  Tensor p = values({0.25, 0.5, 0.75}, {3}, kBFloat16), y = values({0, 1, 1}, {3}, kBFloat16);
  CHECK(binary_cross_entropy(p, y).dtype() == kFloat32);
  // CUDA-only policies (layer_norm in float32) leave CPU tensors alone
  CHECK(layer_norm(values({1, 2, 3, 4}, {2, 2}, kBFloat16), {2}).dtype() == kBFloat16);
}

TEST_CASE("autocast: regions nest, disable and restore, CUDA's region leaves CPU tensors alone") {
  Tensor a = values({1, 2, 3, 4}, {2, 2});
  CHECK(mm(a, a).dtype() == kFloat32);
  {
    AutocastGuard outer(kCpuType);
    CHECK(mm(a, a).dtype() == kBFloat16);
    {
      AutocastGuard off(kCpuType, std::nullopt, /*enabled=*/false);
      CHECK_FALSE(is_autocast_cpu_enabled());
      CHECK(mm(a, a).dtype() == kFloat32);
    }
    CHECK(is_autocast_cpu_enabled());
    CHECK(mm(a, a).dtype() == kBFloat16);
  }
  CHECK_FALSE(is_autocast_cpu_enabled());
  CHECK(mm(a, a).dtype() == kFloat32);
  {
    AutocastGuard gpu(DeviceType::CUDA, kBFloat16);
    CHECK(is_autocast_enabled());
    CHECK(autocast::lower_precision_dtype(DeviceType::CUDA) == kBFloat16);
    CHECK(mm(a, a).dtype() == kFloat32);  // CPU tensors: the CPU's autocast decides
  }
  CHECK(autocast::lower_precision_dtype(DeviceType::CUDA) == kFloat16);
  // per thread: another thread sees no region
  AutocastGuard region(kCpuType);
  bool other_thread_enabled = true;
  std::thread([&] { other_thread_enabled = is_autocast_cpu_enabled(); }).join();
  CHECK_FALSE(other_thread_enabled);
}

TEST_CASE("autocast: gradients reach float32 leaves in float32 through the recorded casts") {
  // y = linear(x, w, b) in bfloat16, loss = sum(y * y) in float32 by hand: w's gradient is
  // 2 * y^T x (y, x and w rounded to bfloat16 on the way, all exact for these values)
  Tensor x = values({1, 2, 0.5, -1}, {2, 2});
  Tensor w = leaf({1, -1, 0.5, 2, 0, 1}, {3, 2}), b = leaf({0.5, 0, -1}, {3});
  Tensor loss;
  {
    AutocastGuard region(kCpuType);
    Tensor y = linear(x, w, b);
    CHECK(y.dtype() == kBFloat16);
    loss = (y.to(kFloat32) * y.to(kFloat32)).sum();
  }
  loss.backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().dtype() == kFloat32);
  CHECK(b.grad().dtype() == kFloat32);
  // y = [[-0.5, 4.5, 1], [2, -1.75, -2]]: grad_y = 2y; grad_w = grad_y^T x; grad_b = column sums
  expect_values(w.grad(), {3, 2}, {1, -6, 7.25, 21.5, 0, 8});
  expect_values(b.grad(), {3}, {3, 5.5, -2});
  CHECK(w.is_leaf());  // the cast's node sits between w and the product
}

TEST_CASE("autocast: backward inside a region runs in the dtypes forward chose") {
  Tensor x = values({1, 2, 3, 4}, {2, 2});
  Tensor w = leaf({1, 0, 0, 1}, {2, 2});
  AutocastGuard region(kCpuType);
  Tensor y = mm(x, w);
  bool autocast_in_backward = true;
  y.register_hook([&](const Tensor& g) {
    autocast_in_backward = is_autocast_cpu_enabled();
    return g;
  });
  y.to(kFloat32).sum().backward();
  CHECK_FALSE(autocast_in_backward);
  CHECK(is_autocast_cpu_enabled());
  CHECK(w.grad().dtype() == kFloat32);
  expect_values(w.grad(), {2, 2}, {4, 4, 6, 6});
}

TEST_CASE("autocast: a weight is cast once per outermost region") {
  Tensor x = values({1, 2, 3, 4}, {2, 2});
  Tensor w = leaf({1, 0.5, -1, 2}, {2, 2});
  Tensor frozen = values({1, 0.5, -1, 2}, {2, 2});  // requires no grad: not cached
  {
    AutocastGuard outer(kCpuType);
    Tensor y1 = mm(x, w);
    Tensor y2 = mm(x, w);
    CHECK(autocast::cache_size() == 1);
    mm(x, frozen);
    mm(mm(x, w), x);  // a non-leaf is not cached either
    CHECK(autocast::cache_size() == 1);
    {
      NoGradGuard no_grad;  // a cast made here has no history: not cached
      Tensor other = leaf({1, 2, 3, 4}, {2, 2});
      mm(x, other);
      CHECK(autocast::cache_size() == 1);
    }
    {
      AutocastGuard inner(kCpuType);
      mm(x, w);
    }
    CHECK(autocast::cache_size() == 1);  // only the outermost region's end clears it
    (y1.to(kFloat32).sum() + y2.to(kFloat32).sum()).backward();
    // both products read the one cached cast; the gradient of each reaches w
    expect_values(w.grad(), {2, 2}, {8, 8, 12, 12});
  }
  CHECK(autocast::cache_size() == 0);
  {
    AutocastGuard no_cache(kCpuType, std::nullopt, true, /*cache_enabled=*/false);
    mm(x, w);
    CHECK(autocast::cache_size() == 0);
  }
}

TEST_CASE("autocast: a region's dtype must be one its device can autocast to") {
  try {
    AutocastGuard bad(kCpuType, kFloat16);
    FAIL("float16 CPU autocast accepted");
  } catch (const ValueError& e) {
    CHECK(e.op() == "autocast");
    CHECK(e.arg() == "dtype");
    CHECK(testing::has(e.what(), "bfloat16 only, got float16"));
  }
  CHECK_THROWS_AS(AutocastGuard(DeviceType::CUDA, kFloat32), ValueError);
  CHECK_FALSE(is_autocast_cpu_enabled());
  CHECK_FALSE(is_autocast_enabled());
}

TEST_CASE("autocast: nll_loss runs in float32 and keeps its integer target") {
  Tensor logp = values({-0.5, -1, -2, -0.25, -3, -1.5}, {2, 3}, kBFloat16);
  Tensor target = from_vector<int64_t>({1, 0}, {2});
  AutocastGuard region(kCpuType);
  Tensor loss = nll_loss(logp, target);
  CHECK(loss.dtype() == kFloat32);
  expect_values(loss, {}, {0.625});
}

TEST_CASE("autocast: a checkpointed block is recomputed in the region forward ran it in") {
  Tensor x = leaf({0.5, -1, 2, 0.25, 1.5, -0.75}, {2, 3}), w = leaf({1, 0.5, -1, 2, 0.25, 1}, {3, 2});
  auto block = [](const TensorList& in) { return TensorList{relu(mm(in[0], in[1]))}; };
  TensorList plain, checkpointed;
  for (bool use_checkpoint : {false, true}) {
    Tensor y;
    {
      AutocastGuard region(kCpuType);
      y = (use_checkpoint ? autograd::checkpoint(block, {x, w}) : block({x, w}))[0];
      CHECK(y.dtype() == kBFloat16);
    }
    TensorList grads = autograd::grad({sum(y.to(kFloat32))}, {x, w});
    (use_checkpoint ? checkpointed : plain) = grads;
  }
  // bit for bit: the recomputation ran mm in bfloat16 as forward did
  for (size_t i = 0; i < 2; ++i) {
    CHECK(checkpointed[i].dtype() == kFloat32);
    CHECK(checkpointed[i].to_vector<float>() == plain[i].to_vector<float>());
  }
}
