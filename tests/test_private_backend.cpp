// An out-of-tree backend (PyTorch's PrivateUse1, kiln/backend_registry.h): "kiln_test" keeps
// its tensors in host memory, moves them with its own copy hook and serves add.Tensor (a
// pointwise op), sum.dim_IntList (a reduction) and mm (a structured kernel) with its own float32
// loops, counting their calls to show they, not the CPU's, ran. The registrations are process
// wide, so the backend registers once, on first use, and every case below may come first.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
#include "kiln/backend_registry.h"
#include "kiln/core.h"
#include "kiln/device_hooks.h"
#include "kiln/gen/api/add.h"
#include "kiln/gen/api/exp.h"
#include "kiln/gen/api/mm.h"
#include "kiln/gen/api/mul.h"
#include "kiln/gen/api/sub.h"
#include "kiln/gen/api/sum.h"
#include "kiln/gen/api/uniform_.h"
#include "kiln/gen/op_kernels/add_Tensor.h"
#include "kiln/gen/op_kernels/mm.h"
#include "kiln/gen/op_kernels/sum_dim_IntList.h"
#include "kiln/meta/matmul.h"
#include "kiln/meta/reduction.h"
#include "kiln/pointwise.h"
#include "support/test_helpers.h"

using namespace kiln;
using kiln::testing::error_text;
using kiln::testing::has;

namespace {

// ---- the backend ----

struct Counts {
  int add = 0, sum = 0, mm = 0, copy = 0, allocations = 0, frees = 0;
};
Counts counts;

class HostAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    ++counts.allocations;
    return nbytes ? std::malloc(nbytes) : nullptr;
  }
  void deallocate(void* p, size_t) override {
    if (p) ++counts.frees;
    std::free(p);
  }
};

// A CPU tensor over the same host memory: the hooks let the CPU's copy_ and fill_ move bytes.
TensorBase host_alias(const TensorBase& t) {
  if (t.is_cpu()) return t;
  Storage s = make_ref<StorageImpl>(t.data_ptr(), t.storage()->nbytes(), kCPU, nullptr);
  return TensorBase(make_ref<TensorImpl>(std::move(s), t.dtype(), t.sizes(), t.strides(), 0));
}

void copy_hook(const TensorBase& dst, const TensorBase& src, bool) {
  ++counts.copy;
  host_alias(dst).copy_(host_alias(src));
}
void fill_hook(const TensorBase& dst, const Scalar& value) { host_alias(dst).fill_(value); }

const DeviceHooks kHooks{"kiln_test", &copy_hook, &fill_hook};

// Element `i` (row-major over t's sizes) of a float32 tensor of any strides.
float& at(const TensorBase& t, int64_t i) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return static_cast<float*>(t.data_ptr())[offset];
}

void check_float32(const char* op, const TensorBase& t) {
  KILN_CHECK(t.dtype() == DType::Float32, NotImplementedError, op, "", "kiln_test computes float32 only");
}

void add_kernel(const PointwiseCall& call) {
  ++counts.add;
  check_float32("add", call.out);
  const float alpha = call.scalars[0].to<float>();
  for (int64_t i = 0; i < call.out.numel(); ++i) at(call.out, i) = at(call.input(0), i) + alpha * at(call.input(1), i);
}

void sum_kernel(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ++counts.sum;
  check_float32("sum", self);
  check_float32("sum", out);
  std::vector<double> acc(size_t(out.numel()), 0.0);
  for (int64_t i = 0; i < self.numel(); ++i) {
    // the output's row-major index: self's index with the reduced dims dropped
    int64_t rest = i, o = 0, scale = 1;
    for (int64_t d = self.dim() - 1; d >= 0; --d) {
      const int64_t k = rest % self.size(d);
      rest /= self.size(d);
      if (plan.reduced[size_t(d)]) continue;
      o += k * scale;
      scale *= self.size(d);
    }
    acc[size_t(o)] += at(self, i);
  }
  for (int64_t o = 0; o < out.numel(); ++o) at(out, o) = float(acc[size_t(o)]);
}

void mm_kernel(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& a, const TensorBase& b) {
  ++counts.mm;
  check_float32("mm", out);
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  const auto* pa = static_cast<const float*>(a.data_ptr());
  const auto* pb = static_cast<const float*>(b.data_ptr());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(pa[i * a.stride(0) + p * a.stride(1)]) * pb[p * b.stride(0) + j * b.stride(1)];
      at(out, i * m + j) = float(s);
    }
}

// A kernel of the wrong type for any pointwise op.
void wrong_kernel(const meta::MatmulPlan&, const TensorBase&, const TensorBase&, const TensorBase&) {}

// The ops' tags type a registration at compile time: the right kernel converts, a wrong one not.
static_assert(std::is_same_v<op_kernels::mm::Kernel, decltype(&mm_kernel)>);
static_assert(!std::is_convertible_v<decltype(&wrong_kernel), op_kernels::add_Tensor::Kernel>);

Device use_backend() {
  static const bool registered = [] {
    rename_privateuse1_backend("kiln_test");
    static HostAllocator allocator;
    register_allocator(DeviceType::PrivateUse1, &allocator);
    register_device_hooks(DeviceType::PrivateUse1, &kHooks);
    // typed by the ops' tags (kiln/gen/op_kernels/<op>.h): a wrong kernel type does not compile
    register_kernel<op_kernels::add_Tensor>(DeviceType::PrivateUse1, &add_kernel);
    register_kernel<op_kernels::sum_dim_IntList>(DeviceType::PrivateUse1, &sum_kernel);
    register_kernel("mm", DeviceType::PrivateUse1, &mm_kernel);  // by name: checked at run time
    return true;
  }();
  (void)registered;
  return Device(DeviceType::PrivateUse1, 0);
}

Tensor floats(std::vector<float> v, IntArrayRef shape) { return from_vector(v, shape); }

void check_close(const Tensor& got, const Tensor& want) {
  REQUIRE(got.is_cpu());
  CHECK(got.sizes().vec() == want.sizes().vec());
  const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i] == doctest::Approx(w[i]).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("private backend: the renamed device parses, prints and moves tensors both ways") {
  const Device dev = use_backend();
  CHECK(dev.str() == "kiln_test:0");
  CHECK(Device("kiln_test:1") == Device(DeviceType::PrivateUse1, 1));
  CHECK(Device("privateuseone") == dev);  // PyTorch's own name still parses
  CHECK(std::string(device_type_name(DeviceType::PrivateUse1)) == "kiln_test");
  CHECK(has(error_text<ValueError>([] { rename_privateuse1_backend("other"); }), "kiln_test"));
  CHECK(has(error_text<ValueError>([] { rename_privateuse1_backend("cuda"); }), "cuda"));
  rename_privateuse1_backend("kiln_test");  // the same name again is fine, as in PyTorch

  const Tensor a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const int copies = counts.copy, allocations = counts.allocations;
  const Tensor on = a.to(dev);
  CHECK(on.device() == dev);
  CHECK(counts.allocations == allocations + 1);
  const Tensor back = on.to(kCPU);
  CHECK(counts.copy == copies + 2);
  check_close(back, a);
  CHECK(has(on.str(), "device='kiln_test:0'"));
  // factories allocate there and fill through the hooks
  const Tensor z = zeros({2, 2}, TensorOptions(kFloat32, dev));
  CHECK(z.device() == dev);
  CHECK(z.to(kCPU).to_vector<float>() == std::vector<float>{0, 0, 0, 0});
  CHECK(full({2}, 1.5, TensorOptions(kFloat32, dev)).to(kCPU).to_vector<float>() == std::vector<float>{1.5f, 1.5f});
  // a transposed (non-contiguous) device tensor comes back in order
  check_close(on.t().to(kCPU), a.t().contiguous());
}

TEST_CASE("private backend: its add, sum and mm kernels run and agree with the CPU") {
  const Device dev = use_backend();
  const Tensor a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = floats({0.5f, -1, 2, 3, 0.25f, -4}, {2, 3});
  const Tensor row = floats({10, 20, 30}, {3});
  const Counts before = counts;
  check_close(add(a.to(dev), b.to(dev), 2).to(kCPU), add(a, b, 2));
  check_close(add(a.to(dev), row.to(dev)).to(kCPU), add(a, row));  // broadcasting
  CHECK(counts.add == before.add + 2);
  check_close(sum(a.to(dev)).to(kCPU), sum(a));
  check_close(sum(a.to(dev), {1}).to(kCPU), sum(a, {1}));
  check_close(sum(a.to(dev), {0}, /*keepdim=*/true).to(kCPU), sum(a, {0}, true));
  CHECK(counts.sum == before.sum + 3);
  check_close(mm(a.to(dev), b.to(dev).t()).to(kCPU), mm(a, b.t()));
  CHECK(counts.mm == before.mm + 1);
}

TEST_CASE("private backend: an op it did not register raises NotImplementedError naming op and device") {
  const Device dev = use_backend();
  const Tensor x = floats({1, 2}, {2}).to(dev);
  const std::string msg = error_text<NotImplementedError>([&] { (void)kiln::exp(x); });
  INFO(msg);
  CHECK(has(msg, "exp"));
  CHECK(has(msg, "kiln_test:0"));
  CHECK(has(msg, "cpu"));
  // an op's missing-kernel message lists its run-time kernels beside its table's
  static constexpr KernelTable<PointwiseKernel> cpu_only = {{&add_kernel}};
  const std::string add_msg = error_text<NotImplementedError>(
      [] { (void)kernel_for(cpu_only, Device(DeviceType::CUDA, 0), Layout::Strided, "add.Tensor"); });
  CHECK(has(add_msg, "it has kernels for: cpu, kiln_test"));
  // a hook the backend left null: a typed error, not a null call
  Tensor y = floats({1, 2}, {2}).to(dev);
  const std::string fill_msg = error_text<NotImplementedError>([&] { (void)uniform_(y); });
  CHECK(has(fill_msg, "uniform_"));
  CHECK(has(fill_msg, "kiln_test:0"));
}

TEST_CASE("private backend: autograd through its registered ops") {
  const Device dev = use_backend();
  // mm's backward is two mm's of transposed views and sum's an expand: all served by kiln_test
  const Tensor a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = floats({0.5f, -1, 2, 3, 0.25f, -4}, {3, 2});
  Tensor da = a.to(dev).requires_grad_(), db = b.to(dev).requires_grad_();
  Tensor ca = a.clone().requires_grad_(), cb = b.clone().requires_grad_();
  const int mm_calls = counts.mm;
  sum(mm(da, db)).backward();
  sum(mm(ca, cb)).backward();
  CHECK(counts.mm == mm_calls + 3);
  REQUIRE(da.grad().defined());
  CHECK(da.grad().device() == dev);
  check_close(da.grad().to(kCPU), ca.grad());
  check_close(db.grad().to(kCPU), cb.grad());
}

TEST_CASE("private backend: registering twice, for CPU or CUDA, or an unknown op is a ValueError naming the op") {
  use_backend();
  std::string msg = error_text<ValueError>([] { register_kernel("add.Tensor", DeviceType::PrivateUse1, &add_kernel); });
  CHECK(has(msg, "add.Tensor"));
  CHECK(has(msg, "registered already"));
  msg = error_text<ValueError>([] { register_kernel("add.Tensor", DeviceType::CPU, &add_kernel); });
  CHECK(has(msg, "add.Tensor"));
  CHECK(has(msg, "PrivateUse1"));
  CHECK(has(error_text<ValueError>([] { register_kernel("add.Tensor", DeviceType::CUDA, &add_kernel); }), "cuda"));
  msg = error_text<ValueError>([] { register_kernel("add.tensor", DeviceType::PrivateUse1, &add_kernel); });
  CHECK(has(msg, "add.tensor"));
  CHECK(has(msg, "no op is named"));
}

TEST_CASE("private backend: a kernel of the wrong type is a ValueError naming the op and both types") {
  const Device dev = use_backend();
  const Tensor x = floats({1, 2}, {2}).to(dev);
  // sub.Tensor's type is not known before its first call here: the call finds the mismatch
  register_kernel("sub.Tensor", DeviceType::PrivateUse1, &wrong_kernel);
  std::string msg = error_text<ValueError>([&] { (void)sub(x, x); });
  INFO(msg);
  CHECK(has(msg, "sub.Tensor"));
  CHECK(has(msg, "MatmulPlan"));
  CHECK(has(msg, "PointwiseCall"));
  // mul.Tensor's is, once a call looked for its kernel: the registration itself fails
  CHECK(has(error_text<NotImplementedError>([&] { (void)mul(x, x); }), "mul"));
  msg = error_text<ValueError>([] { register_kernel("mul.Tensor", DeviceType::PrivateUse1, &wrong_kernel); });
  CHECK(has(msg, "mul.Tensor"));
  CHECK(has(msg, "PointwiseCall"));
  // and one op has one kernel type across layouts
  msg = error_text<ValueError>([] { register_kernel("mm", DeviceType::PrivateUse1, Layout::SparseCoo, &add_kernel); });
  CHECK(has(msg, "mm"));
  CHECK(has(msg, "MatmulPlan"));
}
