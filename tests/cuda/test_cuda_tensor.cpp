// Tensors on the device (runs only where a CUDA device is present): transfers in every
// direction and layout, fills, the generic elementwise launcher's paths, and Philox draws that
// equal the CPU's. Expected values are derived by hand or are the CPU's (the CPU suite checks
// those against PyTorch).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include "kiln/cuda.h"
#include "support/test_helpers.h"
#include "device_compare.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/bernoulli.h"
#include "kiln/gen/api/normal_.h"

using namespace kiln;
using testing::expect_values;

namespace {
const Device kCuda("cuda:0");
Tensor iota(IntArrayRef shape, DType d = kFloat32) { return arange(numel_of(shape), TensorOptions(d)).reshape(shape); }

// Same shape and |a - b| <= atol + rtol * |b| everywhere (rtol = atol = 0: bit-equal values).
bool close(const Tensor& a, const Tensor& b, double rtol = 0, double atol = 0) {
  if (!a.sizes().equals(b.sizes())) return false;
  std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) return false;
  return true;
}
}  // namespace

TEST_CASE("transfers: to, cuda and cpu round-trip values, dtype and shape") {
  Tensor h = iota({2, 3});
  Tensor d = h.cuda();
  CHECK(d.device() == kCuda);
  CHECK(d.dtype() == kFloat32);
  expect_values(d.cpu(), {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_values(h.to(kCuda, /*non_blocking=*/true).cpu(), {2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST_CASE("transfers: non-contiguous sources and destinations, both directions") {
  Tensor h = iota({3, 4});
  expect_values(h.t().cuda().cpu(), {4, 3}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor d = h.cuda();
  expect_values(d.t().cpu(), {4, 3}, {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  expect_values(d.slice(1, 1, 4, 2).cpu(), {3, 2}, {1, 3, 5, 7, 9, 11});
  Tensor host_dst = zeros({4, 3}).t();  // a strided CPU destination
  host_dst.copy_(d);
  expect_values(host_dst.contiguous(), {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor dev_dst = zeros({4, 3}, TensorOptions(kFloat32, kCuda)).t();  // a strided device destination
  dev_dst.copy_(h);
  expect_values(dev_dst.cpu(), {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE("transfers: dtype conversion and broadcasting on the way, with PyTorch's cast rules") {
  Tensor src = from_vector<double>({-1.5, 2.7, 300.0}, {3}, TensorOptions(kFloat64));
  Tensor dst = empty({2, 3}, TensorOptions(kUInt8, kCuda));
  dst.copy_(src.cuda());  // on-device convert + broadcast: -1.5 -> 255 via int64, 300 -> 44
  expect_values(dst.cpu(), {2, 3}, {255, 2, 44, 255, 2, 44});
  Tensor b = empty({3}, TensorOptions(kBool, kCuda));
  b.copy_(from_vector<float>({0.0f, -0.0f, 0.5f}, {3}));
  expect_values(b.cpu(), {3}, {0, 0, 1});
}

TEST_CASE("copies between overlapping views of one device buffer read before writing") {
  Tensor d = iota({5}).cuda();
  d.slice(0, 1, 5).copy_(d.slice(0, 0, 4));
  expect_values(d.cpu(), {5}, {0, 0, 1, 2, 3});
}

TEST_CASE("fills: zeros, ones, full, fill_ on a strided view, scalar_tensor, arange, eye") {
  expect_values(zeros({2, 2}, TensorOptions(kInt32, kCuda)).cpu(), {2, 2}, {0, 0, 0, 0});
  expect_values(ones({3}, TensorOptions(kFloat16, kCuda)).cpu(), {3}, {1, 1, 1});
  expect_values(full({2}, 2.5, TensorOptions(kFloat64, kCuda)).cpu(), {2}, {2.5, 2.5});
  Tensor d = zeros({2, 3}, TensorOptions(kFloat32, kCuda));
  d.slice(1, 0, 3, 2).fill_(7);
  expect_values(d.cpu(), {2, 3}, {7, 0, 7, 7, 0, 7});
  expect_values(arange(4, TensorOptions(kInt64, kCuda)).cpu(), {4}, {0, 1, 2, 3});
  expect_values(eye(2, TensorOptions(kFloat32, kCuda)).cpu(), {2, 2}, {1, 0, 0, 1});
  CHECK(scalar_tensor(3, TensorOptions(kInt64, kCuda)).item().to_int() == 3);
}

TEST_CASE("pointwise: vectorized, strided, broadcast and unaligned operands equal the CPU") {
  Tensor a = randn({67, 33}), b = randn({33});
  Tensor want = (a * b + a).sigmoid();
  Tensor got = (a.cuda() * b.cuda() + a.cuda()).sigmoid();  // broadcast row: strided path
  CHECK(close(got.cpu(), want, 1e-5, 1e-6));
  Tensor big = randn({1 << 16});
  CHECK(close(big.cuda().exp().cpu(), big.exp(), 1e-5, 1e-6));          // dense, aligned: vectorized
  Tensor off = big.cuda().slice(0, 1, (1 << 16) - 2);                       // 4-byte offset: not aligned
  CHECK(close(off.exp().cpu(), big.slice(0, 1, (1 << 16) - 2).exp(), 1e-5, 1e-6));
  Tensor x = a.cuda();
  x.add_(1);  // in place, a CPU scalar joining a device op
  CHECK(close(x.cpu(), a + 1, 0, 0));
  CHECK(close((a.cuda() + 2.0).cpu(), a + 2.0, 0, 0));
}

TEST_CASE("pointwise: integer, bool and half dtypes compute like the CPU") {
  Tensor i = iota({10}, kInt32);
  expect_values((i.cuda() * 3 - 7).cpu(), {10}, {-7, -4, -1, 2, 5, 8, 11, 14, 17, 20});
  expect_values((i.cuda() > 4).cpu(), {10}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 1});
  Tensor h = iota({4}, kFloat16);
  expect_values((h.cuda() / 4).cpu(), {4}, {0, 0.25, 0.5, 0.75});
}

TEST_CASE("Philox draws: manual_seed then rand/randn/normal_/uniform_ give the CPU's numbers") {
  manual_seed(2024);
  Tensor cpu_n = randn({1001});
  Tensor cpu_u = rand({77}, TensorOptions(kFloat64));
  manual_seed(2024);
  Tensor dev_n = randn({1001}, TensorOptions(kFloat32, kCuda));
  Tensor dev_u = rand({77}, TensorOptions(kFloat64, kCuda));
  // uniforms are bit-identical; normals agree to a few ulp (each side's logf/sinf/cosf)
  INFO("max |device - cpu| of randn: ", testing::max_abs_error(dev_n.cpu(), cpu_n));
  CHECK(close(dev_n.cpu(), cpu_n, 1e-5, 1e-5));
  CHECK(close(dev_u.cpu(), cpu_u));
  manual_seed(5);
  Tensor c = empty({9, 3}).t();
  normal_(c, 1.0, 2.0);
  manual_seed(5);
  Tensor d = empty({9, 3}, TensorOptions(kFloat32, kCuda)).t();
  normal_(d, 1.0, 2.0);
  CHECK(close(d.cpu(), c, 1e-5, 1e-5));
}

TEST_CASE("Philox draws: randint and bernoulli draw on the device and give the CPU's numbers") {
  manual_seed(77);
  Tensor p = rand({513});
  Tensor cpu_i = randint(-3, 40, {1000}, TensorOptions(kInt32));
  Tensor cpu_w = randint(0, int64_t(1) << 40, {99}, TensorOptions(kInt64));  // 64-bit draws
  Tensor cpu_b = bernoulli(p);
  manual_seed(77);
  Tensor dp = rand({513}, TensorOptions(kFloat32, kCuda));
  CHECK(close(randint(-3, 40, {1000}, TensorOptions(kInt32, kCuda)).cpu(), cpu_i));
  CHECK(close(randint(0, int64_t(1) << 40, {99}, TensorOptions(kInt64, kCuda)).cpu(), cpu_w));
  Tensor db = bernoulli(dp);
  CHECK(db.device() == kCuda);
  CHECK(close(db.cpu(), cpu_b));
  Tensor bad = full({3}, 1.5, TensorOptions(kFloat32, kCuda));
  std::string msg = testing::error_text<ValueError>([&] { (void)bernoulli(bad); });
  CHECK(testing::has(msg, "bernoulli"));
}

TEST_CASE("Philox draws: randperm sorts the CPU's keys on the device and gives the CPU's permutation") {
  manual_seed(5);
  Tensor cpu_long = randperm(100003, TensorOptions(kInt64));  // past cub's single-tile sort
  Tensor cpu_small = randperm(37, TensorOptions(kFloat32));
  manual_seed(5);
  Tensor d = randperm(100003, TensorOptions(kInt64, kCuda));
  CHECK(d.device() == kCuda);
  CHECK(close(d.cpu(), cpu_long));
  CHECK(close(randperm(37, TensorOptions(kFloat32, kCuda)).cpu(), cpu_small));
  CHECK(randperm(0, TensorOptions(kInt64, kCuda)).numel() == 0);
  CHECK(randperm(1, TensorOptions(kInt32, kCuda)).cpu().to_vector<int32_t>() == std::vector<int32_t>{0});
}

TEST_CASE("errors: mixing devices names the op and both devices") {
  Tensor a = ones({2}).cuda(), b = ones({2});
  std::string msg = testing::error_text<DeviceError>([&] { (void)add(a, b); });
  CHECK(testing::has(msg, "add"));
  CHECK(testing::has(msg, "cuda:0"));
  CHECK(testing::has(msg, "cpu"));
}
