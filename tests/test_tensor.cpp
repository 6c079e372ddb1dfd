// Tensor core: creation values, geometry, views, copy_/fill_ semantics and the CPU allocator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include "kiln/autograd.h"
#include "kiln/cuda.h"
#include "kiln/tensor.h"
#include "kiln/gen/api/t.h"

using namespace kiln;

namespace {
std::vector<int64_t> vec(IntArrayRef r) { return r.vec(); }
}  // namespace

TEST_CASE("tensor: empty/zeros/ones/full and dtype inference") {
  Tensor e = empty({2, 3});
  CHECK(e.dtype() == kFloat32);
  CHECK(vec(e.sizes()) == std::vector<int64_t>{2, 3});
  CHECK(vec(e.strides()) == std::vector<int64_t>{3, 1});
  CHECK(e.numel() == 6);
  CHECK(e.is_contiguous());
  CHECK(e.storage_offset() == 0);
  CHECK(e.is_cpu());
  CHECK(e.nbytes() == 24);
  CHECK(reinterpret_cast<uintptr_t>(e.data_ptr()) % 64 == 0);

  CHECK(zeros({2, 2}, kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(ones({3}, kFloat64).to_vector<double>() == std::vector<double>{1, 1, 1});
  CHECK(ones({2}, kComplex64).to_vector<complex<float>>() == std::vector<complex<float>>{{1, 0}, {1, 0}});
  // torch.full infers bool / int64 / default float / default complex from the value
  CHECK(full({2}, true).dtype() == kBool);
  CHECK(full({2}, 7).dtype() == kInt64);
  CHECK(full({2}, 7).to_vector<int64_t>() == std::vector<int64_t>{7, 7});
  CHECK(full({2}, 2.5).dtype() == kFloat32);
  CHECK(full({2}, complex<double>(1, 2)).dtype() == kComplex64);
  CHECK(full({2, 1}, 2.5, kFloat64).to_vector<double>() == std::vector<double>{2.5, 2.5});
  set_default_float_dtype(kFloat64);
  CHECK(full({1}, 2.5).dtype() == kFloat64);
  CHECK(full({1}, complex<double>(0, 1)).dtype() == kComplex128);
  CHECK(empty({1}).dtype() == kFloat64);
  set_default_float_dtype(kFloat32);

  Tensor src = full({2, 3}, 4, kInt16);
  CHECK(empty_like(src).dtype() == kInt16);
  CHECK(vec(zeros_like(src).sizes()) == std::vector<int64_t>{2, 3});
  CHECK(ones_like(src, kFloat32).to_vector<float>() == std::vector<float>(6, 1.f));
  CHECK(full_like(src, 9).to_vector<int16_t>() == std::vector<int16_t>(6, 9));
  CHECK(full_like(src, 1.5, kFloat64).to_vector<double>() == std::vector<double>(6, 1.5));

  // 0-size and 0-d
  CHECK(empty({0, 4}).numel() == 0);
  CHECK(vec(empty({2, 0, 3}).strides()) == std::vector<int64_t>{3, 3, 1});  // as torch.empty(2, 0, 3).stride()
  CHECK(empty({}).dim() == 0);
  CHECK(empty({}).numel() == 1);
  CHECK_THROWS_AS(empty({2, -1}), ValueError);
  // values that do not fit the dtype (torch: "value cannot be converted to type uint8_t without overflow")
  CHECK_THROWS_AS(full({1}, 300, kUInt8), ValueError);
  CHECK_THROWS_AS(full({1}, -1.5, kUInt8), ValueError);
  CHECK_THROWS_AS(full({1}, 70000.0, kFloat16), ValueError);
  CHECK_THROWS_AS(full({1}, std::nan(""), kInt64), ValueError);
  CHECK_THROWS_AS(full({1}, complex<double>(1, 1), kFloat32), ValueError);
  CHECK(full({1}, -1, kUInt8).to_vector<uint8_t>() == std::vector<uint8_t>{255});  // wraps, as torch
  CHECK(full({1}, -2.9, kInt32).to_vector<int32_t>() == std::vector<int32_t>{-2});
  CHECK(full({1}, complex<double>(1, 0), kFloat32).to_vector<float>() == std::vector<float>{1});
  CHECK(std::isinf(full({1}, std::numeric_limits<double>::infinity(), kFloat32).item<float>()));
}

TEST_CASE("tensor: factories with requires_grad make filled leaves") {
  TensorOptions opts = TensorOptions(kFloat64).with_requires_grad();
  for (const Tensor& t : {ones({2}, opts), zeros({2}, opts), full({2}, 1.5, opts), eye(2, opts), arange(0, 2, 1, opts),
                          linspace(0, 1, 2, opts), scalar_tensor(2, opts), empty({2}, opts)}) {
    REQUIRE(t.impl()->autograd() != nullptr);
    CHECK(t.impl()->autograd()->requires_grad);
    CHECK_FALSE(t.impl()->autograd()->grad_fn);
  }
  CHECK(ones({2}, opts).to_vector<double>() == std::vector<double>{1, 1});
  CHECK(ones({2}).impl()->autograd() == nullptr);  // plain tensors carry no autograd state
}

TEST_CASE("tensor: empty_strided") {
  Tensor t = empty_strided({2, 3}, {1, 2});
  CHECK(vec(t.strides()) == std::vector<int64_t>{1, 2});
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.storage()->nbytes() == 6 * 4);
  CHECK(empty_strided({2, 2}, {0, 1}).storage()->nbytes() == 2 * 4);
  CHECK(empty_strided({0, 5}, {5, 1}).storage()->nbytes() == 0);
}

TEST_CASE("tensor: arange matches torch.arange") {
  Tensor a = arange(5);
  CHECK(a.dtype() == kInt64);
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(arange(0, 10, 3).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 9});
  CHECK(arange(10, 0, -3).to_vector<int64_t>() == std::vector<int64_t>{10, 7, 4, 1});
  Tensor f = arange(0, 1, 0.1);
  CHECK(f.dtype() == kFloat32);
  // torch.arange(0, 1, 0.1).tolist()
  CHECK(f.to_vector<double>() == std::vector<double>{0.0, 0.10000000149011612, 0.20000000298023224,
                                                      0.30000001192092896, 0.4000000059604645, 0.5,
                                                      0.6000000238418579, 0.699999988079071, 0.800000011920929,
                                                      0.8999999761581421});
  CHECK(arange(-1.5, 2.5, 0.7).to_vector<double>() ==
        std::vector<double>{-1.5, -0.800000011920929, -0.10000000149011612, 0.6000000238418579, 1.2999999523162842,
                            2.0});
  CHECK(arange(1, -2, -0.3).numel() == 10);
  // integer dtypes truncate the bounds first: torch.arange(0.5, 3, dtype=torch.int32) -> [0, 1, 2]
  CHECK(arange(0.5, 3, 1, kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2});
  CHECK(arange(0, 5.5, 1, kFloat16).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(arange(5.5, kFloat64).numel() == 6);
  CHECK_THROWS_AS(arange(0, 3, 0), ValueError);
  CHECK_THROWS_AS(arange(0, 3, 0.5, kInt64), ValueError);  // step truncates to 0, as torch
  CHECK_THROWS_AS(arange(0, -3, 1), ValueError);
  CHECK_THROWS_AS(arange(0, std::numeric_limits<double>::infinity(), 1), ValueError);
  CHECK_THROWS_AS(arange(0, 3, 1, kBool), DTypeError);
}

TEST_CASE("tensor: linspace, eye, scalar_tensor, wrapped_scalar") {
  // torch.linspace(0, 1, 7).tolist()
  CHECK(linspace(0, 1, 7).to_vector<double>() ==
        std::vector<double>{0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666269302368, 0.8333333134651184,
                            1.0});
  CHECK(linspace(-1, 1, 6, kFloat64).to_vector<double>() ==
        std::vector<double>{-1.0, -0.6, -0.19999999999999996, 0.19999999999999996, 0.6, 1.0});
  CHECK(linspace(-3, 10, 5, kInt64).to_vector<int64_t>() == std::vector<int64_t>{-3, 0, 3, 6, 10});
  CHECK(linspace(0, 10, 4, kInt32).to_vector<int32_t>() == std::vector<int32_t>{0, 3, 6, 10});
  CHECK(linspace(1, 2, 1).to_vector<float>() == std::vector<float>{1});
  CHECK(linspace(1, 2, 0).numel() == 0);
  CHECK(linspace(0, 1, 5, kComplex64).to_vector<complex<float>>() ==
        std::vector<complex<float>>{{0, 0}, {0.25f, 0}, {0.5f, 0}, {0.75f, 0}, {1, 0}});
  CHECK_THROWS_AS(linspace(0, 1, -1), ValueError);

  CHECK(eye(2, 3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(eye(2, kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0, 1});
  CHECK_THROWS_AS(eye(-1), ValueError);

  Tensor s = scalar_tensor(2.5, kFloat64);
  CHECK(s.dim() == 0);
  CHECK(s.item<double>() == 2.5);
  CHECK_FALSE(s.impl()->is_wrapped_number);

  Tensor w = wrapped_scalar(3);
  CHECK(w.dtype() == kInt64);
  CHECK(w.impl()->is_wrapped_number);
  CHECK(w.item() == Scalar(3));
  CHECK(wrapped_scalar(0.5).dtype() == kFloat64);
  CHECK(wrapped_scalar(true).dtype() == kBool);
  CHECK(wrapped_scalar(complex<double>(1, -1)).item() == Scalar(complex<double>(1, -1)));
}

TEST_CASE("tensor: from_vector, tensor(), from_blob_copy, item, to_vector") {
  Tensor t = from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.dtype() == kInt32);
  CHECK(t.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(from_vector<float>({1, 2, 3}, {2, 2}), ShapeError);
  Tensor conv = from_vector<double>({-1.0, 300.7, 2.9, -129.5}, {4}, kUInt8);
  CHECK(conv.to_vector<int64_t>() == std::vector<int64_t>{255, 44, 2, 127});  // torch .to(torch.uint8)
  CHECK(from_vector<bool>({true, false}, {2}).to_vector<bool>() == std::vector<bool>{true, false});
  CHECK(tensor({1.5f, 2.5f}).to_vector<float>() == std::vector<float>{1.5f, 2.5f});
  CHECK(tensor({1, 2}, kFloat64).dtype() == kFloat64);

  const int16_t raw[4] = {4, -3, 2, 1};
  Tensor b = from_blob_copy(raw, {2, 2}, kInt16);
  CHECK(b.to_vector<int16_t>() == std::vector<int16_t>{4, -3, 2, 1});

  CHECK(tensor({7}).item() == Scalar(int64_t(7)));
  CHECK(tensor({true}).item() == Scalar(true));
  CHECK(tensor({2.5f}).item() == Scalar(2.5));
  CHECK(tensor({Half(0.1f)}).item<double>() == 0.0999755859375);
  CHECK(tensor({complex<float>(1, 2)}).item() == Scalar(complex<double>(1, 2)));
  CHECK_THROWS_AS(tensor({1, 2}).item(), ValueError);
  try {
    tensor({1, 2}).item();
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()) ==
          "kiln::item: argument 'self': a Tensor with 2 elements cannot be converted to Scalar");
  }

  // conversions of to_vector follow torch's casts
  Tensor c = tensor({complex<float>(1, 2), complex<float>(0, -1)});
  CHECK(c.to_vector<float>() == std::vector<float>{1, 0});
  CHECK(c.to_vector<bool>() == std::vector<bool>{true, false});  // real part decides, as torch
  CHECK(tensor({0.1f, -2.5f}).to_vector<BFloat16>()[0].bits == BFloat16(0.1f).bits);
}

TEST_CASE("tensor: data<T>, size/stride with negative dims, wrap_dim") {
  Tensor t = zeros({2, 3, 4});
  CHECK(t.data<float>() != nullptr);
  CHECK_THROWS_AS(t.data<double>(), DTypeError);
  CHECK(t.size(-1) == 4);
  CHECK(t.size(0) == 2);
  CHECK(t.stride(-3) == 12);
  CHECK_THROWS_AS(t.size(3), IndexError);
  CHECK_THROWS_AS(scalar_tensor(1, kFloat32).size(0), IndexError);
  CHECK(wrap_dim(-1, 3, "sum") == 2);
  CHECK(wrap_dim(0, 0, "sum") == 0);  // a 0-d tensor takes dim 0 and -1, as PyTorch
  CHECK(wrap_dim(-1, 0, "sum") == 0);
  try {
    wrap_dim(3, 3, "sum");
    FAIL("no throw");
  } catch (const IndexError& e) {
    CHECK(std::string(e.what()) ==
          "kiln::sum: argument 'dim': dimension out of range (expected to be in range of [-3, 2], but got 3)");
  }
  CHECK(vec(contiguous_strides({2, 3, 4})) == std::vector<int64_t>{12, 4, 1});
  CHECK(vec(contiguous_strides({2, 1, 0, 5})) == std::vector<int64_t>{5, 5, 5, 1});
  CHECK(numel_of({2, 3, 4}) == 24);
  CHECK(numel_of({}) == 1);
}

TEST_CASE("tensor: as_strided_view shares storage and checks bounds") {
  Tensor base = arange(0, 12, 1, kFloat32);
  Tensor m = base.as_strided_view({3, 4}, {4, 1}, 0);
  CHECK(m.is_contiguous());
  Tensor tr = base.as_strided_view({4, 3}, {1, 4}, 0);  // m.t()
  CHECK_FALSE(tr.is_contiguous());
  CHECK(tr.to_vector<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor col = base.as_strided_view({3}, {4}, 1);  // m[:, 1]
  CHECK(col.to_vector<float>() == std::vector<float>{1, 5, 9});
  CHECK(col.storage_offset() == 1);
  Tensor one = base.as_strided_view({1, 3}, {100, 1}, 9);  // size-1 dims may have any stride
  CHECK(one.is_contiguous());
  col.fill_(-1);
  CHECK(base.to_vector<float>() == std::vector<float>{0, -1, 2, 3, 4, -1, 6, 7, 8, -1, 10, 11});
  CHECK(base.version() == col.version());
  CHECK_THROWS_AS(base.as_strided_view({4, 4}, {4, 1}, 0), ShapeError);
  CHECK_THROWS_AS(base.as_strided_view({3}, {4}, 2 + 12), ShapeError);
  CHECK_THROWS_AS(base.as_strided_view({3}, {-1}, 4), ShapeError);
  CHECK(base.as_strided_view({0}, {1}, 12).numel() == 0);

  // set_geometry re-describes in place
  Tensor v = base.as_strided_view({12}, {1}, 0);
  v.impl()->set_geometry({2, 2}, {1, 2}, 4);
  CHECK(v.to_vector<float>() == std::vector<float>{4, 6, -1, 7});
  CHECK_FALSE(v.is_contiguous());
  CHECK(v.numel() == 4);
}

TEST_CASE("tensor: copy_ casts, broadcasts and handles strides") {
  // float -> int32 truncates; bool conversions; complex -> real keeps the real part
  Tensor f = tensor({-2.9f, 0.f, 3.7f});
  Tensor i = empty({3}, kInt32);
  i.copy_(f);
  CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{-2, 0, 3});
  Tensor b = empty({3}, kBool);
  b.copy_(f);
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
  Tensor back = empty({3}, kFloat64);
  back.copy_(b);
  CHECK(back.to_vector<double>() == std::vector<double>{1, 0, 1});
  Tensor nanb = empty({1}, kBool);
  nanb.copy_(tensor({std::nanf("")}));
  CHECK(nanb.item<bool>());
  Tensor c = tensor({complex<double>(1.5, 2), complex<double>(-3, 4)});
  Tensor r = empty({2}, kFloat32);
  r.copy_(c);
  CHECK(r.to_vector<float>() == std::vector<float>{1.5f, -3.f});
  Tensor c2 = empty({2}, kComplex64);
  c2.copy_(tensor({int64_t(5), int64_t(-6)}));
  CHECK(c2.to_vector<complex<float>>() == std::vector<complex<float>>{{5, 0}, {-6, 0}});
  Tensor h = empty({4}, kFloat16);
  h.copy_(tensor({0.1, -2.5, 65519.0, 65520.0}));
  // torch: [0.0999755859375, -2.5, 65504.0, inf]
  std::vector<double> hv = h.to_vector<double>();
  CHECK(hv[0] == 0.0999755859375);
  CHECK(hv[1] == -2.5);
  CHECK(hv[2] == 65504.0);
  CHECK(std::isinf(hv[3]));
  Tensor i8 = empty({4}, kInt8);
  i8.copy_(tensor({-1.0, 300.7, 2.9, -129.5}));
  CHECK(i8.to_vector<int64_t>() == std::vector<int64_t>{-1, 44, 2, 127});  // torch .to(torch.int8)

  // broadcast: a row into every row, a scalar into everything
  Tensor m = zeros({2, 3}, kFloat64);
  m.copy_(tensor({1, 2, 3}));
  CHECK(m.to_vector<double>() == std::vector<double>{1, 2, 3, 1, 2, 3});
  m.copy_(scalar_tensor(7, kInt64));
  CHECK(m.to_vector<double>() == std::vector<double>(6, 7));
  Tensor colv = from_vector<float>({10, 20}, {2, 1});
  m.copy_(colv);
  CHECK(m.to_vector<double>() == std::vector<double>{10, 10, 10, 20, 20, 20});
  CHECK_THROWS_AS(m.copy_(tensor({1, 2})), ShapeError);
  CHECK_THROWS_AS(m.copy_(zeros({4, 2, 3})), ShapeError);

  // non-contiguous source and destination: y.copy_(x.t()) for x = arange(6).reshape(2, 3)
  Tensor x = arange(6);
  Tensor y = zeros({3, 2}, kFloat64);
  y.copy_(x.as_strided_view({3, 2}, {1, 3}, 0));
  CHECK(y.to_vector<double>() == std::vector<double>{0, 3, 1, 4, 2, 5});
  Tensor dst = zeros({4, 4}, kInt64);
  Tensor inner = dst.as_strided_view({2, 2}, {4, 1}, 5);  // dst[1:3, 1:3]
  inner.copy_(from_vector<int64_t>({1, 2, 3, 4}, {2, 2}));
  CHECK(dst.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0});

  // writing into an expanded tensor is refused, as torch
  Tensor expanded = zeros({3}).as_strided_view({2, 3}, {0, 1}, 0);
  CHECK_THROWS_AS(expanded.copy_(zeros({2, 3})), ValueError);

  // version counter
  Tensor v = zeros({2});
  uint32_t before = v.version();
  v.copy_(ones({2}));
  CHECK(v.version() == before + 1);
  v.fill_(3);
  CHECK(v.version() == before + 2);
}

TEST_CASE("tensor: copy_ between overlapping views of one storage") {
  // z = arange(10.); z[1:].copy_(z[:-1])  ->  [0, 0, 1, 2, ..., 8]
  Tensor z = arange(0, 10, 1, kFloat32);
  z.as_strided_view({9}, {1}, 1).copy_(z.as_strided_view({9}, {1}, 0));
  CHECK(z.to_vector<float>() == std::vector<float>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  // transpose a square matrix onto itself: a.copy_(a.t())
  Tensor a = arange(0, 9, 1, kInt64);
  Tensor am = a.as_strided_view({3, 3}, {3, 1}, 0);
  am.copy_(a.as_strided_view({3, 3}, {1, 3}, 0));
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 1, 4, 7, 2, 5, 8});
  // copying a tensor onto itself leaves it unchanged
  am.copy_(am);
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 1, 4, 7, 2, 5, 8});
}

TEST_CASE("tensor: large copy_ and fill_ run in parallel chunks correctly") {
  const int64_t n = 300007;  // above the parallel grain, not a multiple of the thread count
  Tensor src = arange(0, n, 1, kInt64);
  Tensor dst = empty({n}, kFloat64);
  dst.copy_(src);
  std::vector<double> d = dst.to_vector<double>();
  bool ok = true;
  for (int64_t k = 0; k < n; ++k) ok = ok && d[size_t(k)] == double(k);
  CHECK(ok);
  // strided destination: every other element of a 2n buffer
  Tensor wide = zeros({2 * n}, kInt32);
  wide.as_strided_view({n}, {2}, 1).copy_(src);
  std::vector<int32_t> w = wide.to_vector<int32_t>();
  ok = true;
  for (int64_t k = 0; k < n; ++k) ok = ok && w[size_t(2 * k)] == 0 && w[size_t(2 * k + 1)] == int32_t(k);
  CHECK(ok);
  Tensor big = empty({1000, 301}, kFloat32);
  big.as_strided_view({301, 1000}, {1, 301}, 0).fill_(2.5);
  std::vector<float> bv = big.to_vector<float>();
  CHECK(std::all_of(bv.begin(), bv.end(), [](float x) { return x == 2.5f; }));
}

TEST_CASE("tensor: to(Device) and devices without a backend") {
  Tensor t = ones({2});
  CHECK(t.to(kCPU).is_same(t));
  Tensor c = t.to(kCPU, false, true);
  CHECK_FALSE(c.is_same(t));
  CHECK(c.storage() != t.storage());
  CHECK(c.to_vector<float>() == std::vector<float>{1, 1});
  CHECK(t.cpu().is_same(t));
  if (!cuda::is_available()) {
    // Built without CUDA, or built with it on a machine without a device: either way, why.
    const std::string why = cuda::is_built() ? "no CUDA device is available (" + cuda::unavailable_reason() + ")"
                                             : "no allocator for device cuda:0 (kiln was built without CUDA)";
    try {
      t.cuda();
      FAIL("no throw");
    } catch (const DeviceError& e) {
      CHECK(std::string(e.what()) == "kiln::to: argument 'device': " + why);
    }
    CHECK_THROWS_AS(allocator_for(Device("cuda:0")), DeviceError);
    CHECK_THROWS_AS(zeros({2}, Device("cuda")), DeviceError);
  }
  CHECK(allocator_for(kCPU) == cpu_allocator());
}

TEST_CASE("allocator: 64-byte aligned, caches freed blocks by size class and reuses them") {
  cpu_allocator_empty_cache();
  AllocatorStats s0 = cpu_allocator_stats();
  CHECK(s0.cached_bytes == 0);
  {
    Tensor a = empty({2500}, kFloat32);  // 10000 bytes -> the 10240-byte class
    CHECK(reinterpret_cast<uintptr_t>(a.data_ptr()) % 64 == 0);
    AllocatorStats s1 = cpu_allocator_stats();
    CHECK(s1.system_allocations == s0.system_allocations + 1);
    CHECK(s1.allocations == s0.allocations + 1);
    CHECK(s1.live_bytes == s0.live_bytes + 10240);
    CHECK(s1.peak_bytes >= s1.live_bytes);
  }
  AllocatorStats s2 = cpu_allocator_stats();
  CHECK(s2.cached_bytes == 10240);
  CHECK(s2.live_bytes == s0.live_bytes);
  void* reused;
  {
    Tensor b = empty({1125}, kFloat64);  // 9000 bytes: same class, served from the cache
    reused = b.data_ptr();
    AllocatorStats s3 = cpu_allocator_stats();
    CHECK(s3.system_allocations == s2.system_allocations);
    CHECK(s3.allocations == s2.allocations + 1);
    CHECK(s3.cached_bytes == 0);
  }
  {
    Tensor c = empty({20000}, kInt8);  // a different class: a new block
    CHECK(c.data_ptr() != reused);
    CHECK(cpu_allocator_stats().system_allocations == s2.system_allocations + 1);
  }
  // direct use of the allocator
  Allocator* a = cpu_allocator();
  void* p = a->allocate(100);
  CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
  a->deallocate(p, 100);
  void* q = a->allocate(128);  // 100 and 128 bytes share the 128-byte class
  CHECK(q == p);
  a->deallocate(q, 128);
  CHECK(a->allocate(0) == nullptr);
  cpu_allocator_empty_cache();
  CHECK(cpu_allocator_stats().cached_bytes == 0);
}

TEST_CASE("allocator: concurrent use from several threads, freeing on another thread") {
  cpu_allocator_empty_cache();
  int64_t live_before = cpu_allocator_stats().live_bytes;
  std::vector<Tensor> handed_over(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([k, &handed_over] {
      for (int i = 0; i < 2000; ++i) {
        Tensor t = full({int64_t(1 + (i * 7 + k) % 3000)}, k, kInt32);
        if (t.to_vector<int32_t>().back() != k) throw std::runtime_error("wrong fill");
      }
      handed_over[size_t(k)] = ones({100 + k});  // freed by the main thread below
    });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) CHECK(handed_over[size_t(k)].numel() == 100 + k);
  handed_over.clear();
  AllocatorStats s = cpu_allocator_stats();
  CHECK(s.live_bytes == live_before);
  CHECK(s.cached_bytes > 0);
  cpu_allocator_empty_cache();
}

TEST_CASE("storage: adopting a buffer calls its deleter") {
  static int deleted = 0;
  static float buffer[4] = {1, 2, 3, 4};
  {
    Storage s(new StorageImpl(buffer, sizeof buffer, kCPU, [](void*, size_t n) { deleted += int(n); }));
    Tensor t(make_ref<TensorImpl>(s, kFloat32, IntArrayRef({2, 2}), IntArrayRef({2, 1}), 0));
    CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3, 4});
    CHECK(s->version() == 0);
    s->bump_version();
    CHECK(t.version() == 1);
  }
  CHECK(deleted == int(sizeof buffer));
}
