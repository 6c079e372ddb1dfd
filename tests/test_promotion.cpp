// Type promotion, broadcasting and pointwise preparation (kiln/pointwise.h).
// Expected dtypes are torch.result_type's (PyTorch 1.13).
#include <doctest/doctest.h>

#include <string>
#include "kiln/dispatch.h"
#include "kiln/core.h"
#include "kiln/pointwise.h"
#include "support/test_helpers.h"

using namespace kiln;
using kiln::testing::error_text;
using pointwise::result_type;

namespace {

Tensor dimmed(DType d) { return zeros({2}, TensorOptions(d)); }
Tensor zero_dim(DType d) { return zeros({}, TensorOptions(d)); }

const char* const kBinaryNames[] = {"self", "other"};
const PointwiseSpec kAdd{"add", kBinaryNames, 2, Promotion::Default};
const PointwiseSpec kDiv{"div", kBinaryNames, 2, Promotion::IntToFloat};
const PointwiseSpec kEq{"eq", kBinaryNames, 2, Promotion::BoolResult};
const char* const kUnaryNames[] = {"self"};
const PointwiseSpec kAbs{"abs", kUnaryNames, 1, Promotion::ComplexToReal};
const char* const kMaskNames[] = {"self", "mask"};
const PointwiseSpec kMaskedFill{"masked_fill", kMaskNames, 2, Promotion::SelfDType, 0b10};
const char* const kWhereNames[] = {"condition", "self", "other"};
const PointwiseSpec kWhere{"where", kWhereNames, 3, Promotion::Default, 0b001};

// Restores the default float dtype even when a check fails.
struct DefaultFloatGuard {
  DType prev = default_float_dtype();
  ~DefaultFloatGuard() { set_default_float_dtype(prev); }
};

}  // namespace

TEST_CASE("result_type: dimensioned tensors promote fully") {
  Tensor u8 = dimmed(kUInt8), i8 = dimmed(kInt8), f16 = dimmed(kFloat16), bf16 = dimmed(kBFloat16);
  CHECK(result_type({&u8, &i8}) == kInt16);
  CHECK(result_type({&f16, &bf16}) == kFloat32);
  Tensor i32 = dimmed(kInt32), c64 = dimmed(kComplex64), f64 = dimmed(kFloat64);
  CHECK(result_type({&i32, &f64}) == kFloat64);
  CHECK(result_type({&c64, &f64}) == kComplex128);
}

TEST_CASE("result_type: zero-dim tensors count only when their category is higher") {
  Tensor f16 = dimmed(kFloat16), d0 = zero_dim(kFloat64);
  CHECK(result_type({&f16, &d0}) == kFloat16);
  Tensor i8 = dimmed(kInt8), l0 = zero_dim(kInt64);
  CHECK(result_type({&i8, &l0}) == kInt8);
  Tensor u8 = dimmed(kUInt8), c0 = zero_dim(kInt8);
  CHECK(result_type({&u8, &c0}) == kUInt8);  // not int16: the 0-d int8 is of the same category
  Tensor i32 = dimmed(kInt32);
  CHECK(result_type({&i32, &d0}) == kFloat64);  // a higher category keeps its own precision
  Tensor b = dimmed(kBool), h0 = zero_dim(kFloat16);
  CHECK(result_type({&b, &h0}) == kFloat16);
  Tensor a0 = zero_dim(kInt64), b0 = zero_dim(kInt32);
  CHECK(result_type({&a0, &b0}) == kInt64);  // among themselves 0-d tensors promote fully
  Tensor i16 = dimmed(kInt16), z0 = zero_dim(kComplex128);
  CHECK(result_type({&i16, &z0}) == kComplex128);
}

TEST_CASE("result_type: wrapped numbers and promoting scalars") {
  Tensor i32 = dimmed(kInt32), b = dimmed(kBool), f32 = dimmed(kFloat32), f64 = dimmed(kFloat64);
  Tensor two_half = wrapped_scalar(2.5), one = wrapped_scalar(1), j = wrapped_scalar(complex<double>(0, 1));
  Tensor yes = wrapped_scalar(true), minus_one = wrapped_scalar(-1);
  CHECK(result_type({&i32, &two_half}) == kFloat32);  // a Python float is the default float
  CHECK(result_type({&b, &one}) == kInt64);
  CHECK(result_type({&f32, &j}) == kComplex64);
  CHECK(result_type({&f64, &j}) == kComplex128);  // a floating tensor keeps its precision
  CHECK(result_type({&i32, &j}) == kComplex64);
  CHECK(result_type({&b, &yes}) == kBool);
  Tensor u8 = dimmed(kUInt8);
  CHECK(result_type({&u8, &minus_one}) == kUInt8);
  Tensor i0 = zero_dim(kInt32), d0 = zero_dim(kFloat64);
  CHECK(result_type({&i0, &two_half}) == kFloat32);
  CHECK(result_type({&d0, &two_half}) == kFloat64);
  CHECK(result_type({&one, &two_half}) == kFloat32);
  // torch gives complex32 here; kiln has no complex32, so the nearest complex type
  Tensor f16 = dimmed(kFloat16);
  CHECK(result_type({&f16, &j}) == kComplex64);

  // Scalar arguments (pow's exponent, clamp's bounds) weigh like wrapped numbers; null ones are skipped
  Scalar s25(2.5), s1(int64_t(1));
  const TensorBase* ts[] = {&i32};
  const Scalar* ss[] = {&s25, nullptr};
  CHECK(result_type(ts, 1, ss, 2) == kFloat32);
  const Scalar* si[] = {&s1};
  CHECK(result_type(ts, 1, si, 1) == kInt32);
  Tensor i8 = dimmed(kInt8);
  const TensorBase* t8[] = {&i8};
  CHECK(result_type(t8, 1, si, 1) == kInt8);
}

TEST_CASE("result_type: the default float dtype decides for Python floats") {
  DefaultFloatGuard guard;
  set_default_float_dtype(kFloat64);
  Tensor i32 = dimmed(kInt32), f32 = dimmed(kFloat32), i8 = zero_dim(kInt8);
  Tensor x = wrapped_scalar(2.5), j = wrapped_scalar(complex<double>(0, 1));
  CHECK(result_type({&i32, &x}) == kFloat64);
  CHECK(result_type({&f32, &j}) == kComplex64);
  CHECK(result_type({&i32, &j}) == kComplex128);
  CHECK(result_type({&i8, &x}) == kFloat64);
}

TEST_CASE("result_type: undefined tensors are skipped, nothing at all is an error") {
  Tensor none, i32 = dimmed(kInt32);
  CHECK(result_type({&none, &i32}) == kInt32);
  CHECK_THROWS_AS(result_type({&none}), ValueError);
}

TEST_CASE("broadcast_shapes") {
  CHECK(pointwise::broadcast_shapes({2, 3}, {3}, "add", "other") == DimVector{2, 3});
  CHECK(pointwise::broadcast_shapes({4, 1, 3}, {5, 1}, "add", "other") == DimVector{4, 5, 3});
  CHECK(pointwise::broadcast_shapes({0}, {1}, "add", "other") == DimVector{0});
  CHECK(pointwise::broadcast_shapes({}, {2, 2}, "add", "other") == DimVector{2, 2});
  CHECK(pointwise::broadcast_shapes({1, 0}, {3, 1}, "add", "other") == DimVector{3, 0});
  std::string msg = error_text<ShapeError>([] { pointwise::broadcast_shapes({2, 3}, {4}, "add", "other"); });
  CHECK(msg == "kiln::add: argument 'other': shapes [2, 3] and [4] are not broadcastable");
}

TEST_CASE("prepare: promotes, casts, broadcasts and allocates") {
  Tensor a = arange(6, TensorOptions(kInt32)).reshape({2, 3});
  Tensor b = tensor<float>({0.5f, 1.5f, 2.5f});
  PointwiseCall call = pointwise::prepare(kAdd, {&a, &b});
  CHECK(call.compute_dtype == kFloat32);
  CHECK(call.out.dtype() == kFloat32);
  CHECK(call.out.sizes().equals({2, 3}));
  CHECK(call.num_inputs == 2);
  // a was cast to float32 (a new tensor) and b broadcast by a stride-0 view of its own storage
  CHECK(call.input(0).dtype() == kFloat32);
  CHECK(call.input(0).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(call.input(1).sizes().equals({2, 3}));
  CHECK(call.input(1).strides().equals({0, 1}));
  CHECK(call.input(1).storage().get() == b.storage().get());
  CHECK(call.input(1).to_vector<float>() == std::vector<float>{0.5f, 1.5f, 2.5f, 0.5f, 1.5f, 2.5f});

  // inputs already of the compute dtype and shape are passed through as they are
  Tensor c = zeros({2, 3});
  PointwiseCall same = pointwise::prepare(kAdd, {&c, &c});
  CHECK(same.input(0).is_same(c));
  CHECK(same.input(1).is_same(c));
}

TEST_CASE("prepare: promotion modes") {
  Tensor i32 = arange(3, TensorOptions(kInt32)), i64 = arange(3, TensorOptions(kInt64));
  PointwiseCall div = pointwise::prepare(kDiv, {&i32, &i64});
  CHECK(div.compute_dtype == kFloat32);
  CHECK(div.out.dtype() == kFloat32);
  CHECK(div.input(0).dtype() == kFloat32);

  PointwiseCall eq = pointwise::prepare(kEq, {&i32, &i64});
  CHECK(eq.compute_dtype == kInt64);
  CHECK(eq.out.dtype() == kBool);

  Tensor z = zeros({3}, TensorOptions(kComplex128));
  PointwiseCall abs = pointwise::prepare(kAbs, {&z});
  CHECK(abs.compute_dtype == kComplex128);
  CHECK(abs.out.dtype() == kFloat64);

  Tensor mask = zeros({2, 3}, TensorOptions(kBool)), self = zeros({3}, TensorOptions(kInt32));
  PointwiseCall mf = pointwise::prepare(kMaskedFill, {&self, &mask});
  CHECK(mf.compute_dtype == kInt32);
  CHECK(mf.out.dtype() == kInt32);
  CHECK(mf.out.sizes().equals({2, 3}));
  CHECK(mf.input(1).dtype() == kBool);
}

TEST_CASE("prepare: bool inputs are checked, not promoted") {
  Tensor cond = zeros({3, 1}, TensorOptions(kBool)), x = zeros({3}, TensorOptions(kInt8)), y = zeros({3}, TensorOptions(kFloat64));
  PointwiseCall call = pointwise::prepare(kWhere, {&cond, &x, &y});
  CHECK(call.compute_dtype == kFloat64);
  CHECK(call.input(0).dtype() == kBool);
  CHECK(call.input(0).sizes().equals({3, 3}));
  CHECK(call.input(0).strides().equals({1, 0}));
  Tensor fcond = zeros({3});
  std::string msg = error_text<DTypeError>([&] { pointwise::prepare(kWhere, {&fcond, &x, &y}); });
  CHECK(msg == "kiln::where: argument 'condition': expected a bool tensor, got float32");
}

TEST_CASE("prepare: argument errors name the argument") {
  Tensor a = zeros({2, 3}), b = zeros({4}), none;
  CHECK(error_text<ShapeError>([&] { pointwise::prepare(kAdd, {&a, &b}); }) ==
        "kiln::add: argument 'other': shapes [2, 3] and [4] are not broadcastable");
  CHECK(error_text<ValueError>([&] { pointwise::prepare(kAdd, {&a, &none}); }) ==
        "kiln::add: argument 'other': expected a tensor, got an undefined one");
}

TEST_CASE("prepare_inplace: computes into self when it can") {
  Tensor self = zeros({2, 3}), other = arange(3, TensorOptions(kInt64));
  PointwiseCall call = pointwise::prepare_inplace(kAdd, self, {&self, &other});
  CHECK(call.out.is_same(self));
  CHECK(call.input(0).is_same(self));
  CHECK(call.input(1).dtype() == kFloat32);
  uint32_t v = self.version();
  pointwise::finish(call, self);
  CHECK(self.version() != v);  // autograd sees the write
}

TEST_CASE("prepare_inplace: shape and dtype errors") {
  Tensor small = zeros({3}), big = zeros({2, 3});
  CHECK(error_text<ShapeError>([&] { pointwise::prepare_inplace(kAdd, small, {&small, &big}); }) ==
        "kiln::add: argument 'self': output with shape [3] doesn't match the broadcast shape [2, 3]");
  Tensor l = zeros({3}, TensorOptions(kInt64)), f = zeros({3});
  CHECK(error_text<DTypeError>([&] { pointwise::prepare_inplace(kAdd, l, {&l, &f}); }) ==
        "kiln::add: argument 'self': result type float32 can't be cast to the desired output type int64");
  CHECK_THROWS_AS(pointwise::prepare_inplace(kDiv, l, {&l, &l}), DTypeError);  // int / int is float
  // an expanded self would have several elements written at one address
  Tensor row = zeros({3}), expanded = row.expand({2, 3});
  CHECK_THROWS_AS(pointwise::prepare_inplace(kAdd, expanded, {&expanded, &big}), ValueError);
}

TEST_CASE("prepare_inplace: a wider result goes through a temporary, finish casts it back") {
  Tensor self = tensor<float>({1, 2, 3}), other = tensor<double>({0.25, 0.5, 0.75});
  PointwiseCall call = pointwise::prepare_inplace(kAdd, self, {&self, &other});
  CHECK(call.compute_dtype == kFloat64);
  CHECK_FALSE(call.out.is_same(self));
  CHECK(call.out.dtype() == kFloat64);
  // stand in for the kernel
  call.out.copy_(tensor<double>({1.25, 2.5, 3.75}));
  pointwise::finish(call, self);
  CHECK(self.to_vector<float>() == std::vector<float>{1.25f, 2.5f, 3.75f});

  // eq_ on a float tensor: the bool result is stored as 0/1 in self's dtype
  Tensor x = tensor<float>({1, 2}), y = tensor<float>({1, 5});
  PointwiseCall eq = pointwise::prepare_inplace(kEq, x, {&x, &y});
  CHECK(eq.out.dtype() == kBool);
  CHECK_FALSE(eq.out.is_same(x));
}

TEST_CASE("prepare_inplace: overlapping inputs force a temporary") {
  Tensor a = arange(9, TensorOptions(kFloat32)).reshape({3, 3});
  Tensor at = a.t();
  PointwiseCall call = pointwise::prepare_inplace(kAdd, a, {&a, &at});
  CHECK_FALSE(call.out.is_same(a));  // a.add_(a.t()) must read the old values
  PointwiseCall same = pointwise::prepare_inplace(kAdd, a, {&a, &a});
  CHECK(same.out.is_same(a));  // identical elements in identical order are safe
  Tensor row0 = a.select(0, 0), row2 = a.select(0, 2);
  PointwiseCall disjoint = pointwise::prepare_inplace(kAdd, row0, {&row0, &row2});
  CHECK(disjoint.out.is_same(row0));  // same storage, disjoint memory
}

TEST_CASE("prepare_out: resizes, checks the dtype, uses a temporary for another dtype") {
  Tensor a = zeros({2, 3}), b = zeros({3});
  Tensor out = empty({0});
  PointwiseCall call = pointwise::prepare_out(kAdd, out, {&a, &b});
  CHECK(out.sizes().equals({2, 3}));
  CHECK(out.is_contiguous());
  CHECK(call.out.is_same(out));

  Tensor wrong_shape = zeros({4, 4});
  PointwiseCall c2 = pointwise::prepare_out(kAdd, wrong_shape, {&a, &b});
  CHECK(wrong_shape.sizes().equals({2, 3}));
  CHECK(c2.out.is_same(wrong_shape));

  Tensor l = empty({2, 3}, TensorOptions(kInt64));
  CHECK(error_text<DTypeError>([&] { pointwise::prepare_out(kAdd, l, {&a, &b}); }) ==
        "kiln::add: argument 'out': result type float32 can't be cast to the desired output type int64");

  Tensor d = empty({2, 3}, TensorOptions(kFloat64));
  PointwiseCall c3 = pointwise::prepare_out(kAdd, d, {&a, &b});
  CHECK_FALSE(c3.out.is_same(d));
  CHECK(c3.out.dtype() == kFloat32);
  c3.out.fill_(1.5);
  pointwise::finish(c3, d);
  CHECK(d.to_vector<double>() == std::vector<double>(6, 1.5));

  Tensor bools = empty({3}, TensorOptions(kBool));
  Tensor x = tensor<float>({1, 2, 3});
  PointwiseCall c4 = pointwise::prepare_out(kEq, bools, {&x, &x});
  CHECK(c4.out.is_same(bools));
}

TEST_CASE("dispatch: a found kernel is called with its arguments, a CUDA one with its device current") {
  using Kernel = void (*)(int&);
  static const KernelTable<Kernel> table = {{+[](int& n) { n += 1; }}, {+[](int& n) { n += 10; }}};
  int calls = 0;
  kernel_for(table, kCPU, Layout::Strided, "add")(calls);
  CHECK(calls == 1);
  auto on_cuda = kernel_for(table, Device(DeviceType::CUDA, 0), Layout::Strided, "add");
  CHECK(on_cuda.device == Device(DeviceType::CUDA, 0));
  if (cuda::is_available()) {  // the guard makes cuda:0 current for the call and restores the caller's
    const int before = cuda::current_device();
    on_cuda(calls);
    CHECK(calls == 11);
    CHECK(cuda::current_device() == before);
  } else {  // the guard is on the call's path: no device, a DeviceError before the kernel runs
    CHECK_THROWS_AS(on_cuda(calls), DeviceError);
    CHECK(calls == 1);
  }
}

TEST_CASE("dispatch errors list what exists") {
  CHECK(error_text<DTypeError>([] {
          pointwise::throw_dtype_unsupported("add", kInt16, kCPU, {kFloat32, kFloat64});
        }) == "kiln::add: argument 'self': no CPU kernel for dtype int16; it has: float32, float64");
  // An op's kernel table: a null entry names the backends that have the op.
  using Kernel = void (*)();
  static const KernelTable<Kernel> cpu_only = {{+[] {}}, {nullptr}};
  static const KernelTable<Kernel> both = {{+[] {}}, {+[] {}}};
  CHECK(bool(kernel_for(cpu_only, kCPU, Layout::Strided, "add").fn == cpu_only[0][0]));
  CHECK(error_text<NotImplementedError>([] {
          kernel_for(cpu_only, Device(DeviceType::CUDA, 0), Layout::Strided, "add");
        }) == "kiln::add: no cuda kernel (cuda:0); it has kernels for: cpu");
  CHECK(error_text<NotImplementedError>([] { kernel_for(both, kCPU, Layout::SparseCoo, "add"); }) ==
        "kiln::add: argument 'layout': no sparse_coo kernel for cpu; it has kernels for: cpu, cuda");
  CHECK(pointwise::choice_index("gelu", "approximate", "none", {"none", "tanh"}) == 0);
  CHECK(pointwise::choice_index("gelu", "approximate", "tanh", {"none", "tanh"}) == 1);
  CHECK(error_text<ValueError>([] { pointwise::choice_index("gelu", "approximate", "erf", {"none", "tanh"}); }) ==
        "kiln::gelu: argument 'approximate': expected one of 'none', 'tanh', got 'erf'");
}
