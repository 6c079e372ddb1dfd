// Tensor::str against the exact strings torch 1.13's print(tensor) produces for the same data.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include "kiln/autograd.h"
#include "kiln/tensor.h"

using namespace kiln;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Tensor make(std::vector<T> v, IntArrayRef sizes) { return from_vector(v, sizes); }

Tensor range_f32(int64_t n, IntArrayRef sizes) {  // torch.arange(n.).reshape(sizes)
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(float(i));
  return from_vector(v, sizes);
}
Tensor range_i64(int64_t n, IntArrayRef sizes) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return from_vector(v, sizes);
}
}  // namespace

TEST_CASE("printing: floats in fixed, integer and scientific layout") {
  CHECK(make<float>({1, 2, 3, 4}, {2, 2}).str() == "tensor([[1., 2.],\n        [3., 4.]])");
  CHECK(make<double>({0, 1, 2, 3, 4, 5}, {2, 3}).str() ==
        "tensor([[0., 1., 2.],\n        [3., 4., 5.]], dtype=torch.float64)");
  CHECK(make<float>({1e-5f, 1.0f}, {2}).str() == "tensor([1.0000e-05, 1.0000e+00])");
  CHECK(make<float>({1.5f, 2.25f, -3.125f}, {3}).str() == "tensor([ 1.5000,  2.2500, -3.1250])");
  CHECK(make<float>({1e10f, 1.f}, {2}).str() == "tensor([1.0000e+10, 1.0000e+00])");
  CHECK(make<float>({123456789.f, 1.f}, {2}).str() == "tensor([1.2346e+08, 1.0000e+00])");
  CHECK(make<float>({1e-10f, 2e-10f}, {2}).str() == "tensor([1.0000e-10, 2.0000e-10])");
  CHECK(make<float>({-1, 10, 100, 1000}, {2, 2}).str() == "tensor([[  -1.,   10.],\n        [ 100., 1000.]])");
  CHECK(make<float>({-0.0f, 1.5f}, {2}).str() == "tensor([-0.0000, 1.5000])");
  CHECK(zeros({3}).str() == "tensor([0., 0., 0.])");
  CHECK(make<float>({float(kNaN), float(kInf), 1.f}, {3}).str() == "tensor([nan, inf, 1.])");
  CHECK(make<float>({float(kNaN), float(-kInf), 1.5f}, {3}).str() == "tensor([   nan,   -inf, 1.5000])");
  CHECK(make<Half>({Half(0.1f), Half(2.f)}, {2}).str() == "tensor([0.1000, 2.0000], dtype=torch.float16)");
  CHECK(make<BFloat16>({BFloat16(0.1f), BFloat16(-2.5f)}, {2}).str() ==
        "tensor([ 0.1001, -2.5000], dtype=torch.bfloat16)");
}

TEST_CASE("printing: integers, bools and 0-d tensors") {
  CHECK(make<int8_t>({-1, 100, 5}, {3}).str() == "tensor([ -1, 100,   5], dtype=torch.int8)");
  CHECK(make<uint8_t>({0, 255, 7, 12}, {2, 2}).str() ==
        "tensor([[  0, 255],\n        [  7,  12]], dtype=torch.uint8)");
  CHECK(make<int64_t>({-123456, 2, 3, 4}, {2, 2}).str() ==
        "tensor([[-123456,       2],\n        [      3,       4]])");
  CHECK(make<int32_t>({1, 2}, {2}).str() == "tensor([1, 2], dtype=torch.int32)");
  CHECK(make<bool>({true, false, true}, {3}).str() == "tensor([ True, False,  True])");
  CHECK(range_i64(24, {2, 3, 4}).str() ==
        "tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n         [ 8,  9, 10, 11]],\n\n"
        "        [[12, 13, 14, 15],\n         [16, 17, 18, 19],\n         [20, 21, 22, 23]]])");
  CHECK(scalar_tensor(3.5, kFloat32).str() == "tensor(3.5000)");
  CHECK(scalar_tensor(7, kInt64).str() == "tensor(7)");
  CHECK(scalar_tensor(true, kBool).str() == "tensor(True)");
  CHECK(scalar_tensor(complex<double>(1, -2), kComplex64).str() == "tensor(1.-2.j)");
}

TEST_CASE("printing: complex") {
  CHECK(make<complex<float>>({{1, 2}, {-3.5f, -0.5f}}, {2}).str() == "tensor([ 1.0000+2.0000j, -3.5000-0.5000j])");
  CHECK(make<complex<double>>({{1, 2}, {0.25, -1}}, {2}).str() ==
        "tensor([1.0000+2.j, 0.2500-1.j], dtype=torch.complex128)");
  CHECK(make<complex<float>>({{1e-6f, 1}, {2, 0}}, {2}).str() == "tensor([1.0000e-06+1.j, 2.0000e+00+0.j])");
  std::vector<complex<float>> v;
  for (int i = 0; i < 12; ++i) v.push_back({float(i), float(-i / 3.0)});
  CHECK(from_vector(v, {12}).str() ==
        "tensor([ 0.+0.0000j,  1.-0.3333j,  2.-0.6667j,  3.-1.0000j,  4.-1.3333j,\n"
        "         5.-1.6667j,  6.-2.0000j,  7.-2.3333j,  8.-2.6667j,  9.-3.0000j,\n"
        "        10.-3.3333j, 11.-3.6667j])");
}

TEST_CASE("printing: empty tensors show size and dtype") {
  CHECK(empty({0}).str() == "tensor([])");
  CHECK(zeros({0, 3}).str() == "tensor([], size=(0, 3))");
  CHECK(zeros({0}, kInt64).str() == "tensor([], dtype=torch.int64)");
  CHECK(zeros({2, 0}, kInt32).str() == "tensor([], size=(2, 0), dtype=torch.int32)");
}

TEST_CASE("printing: line wrapping and suffix placement") {
  std::vector<float> v;
  for (int i = 0; i < 30; ++i) v.push_back(float(i) / 7.0f);
  CHECK(from_vector(v, {30}).str() ==
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
  std::vector<double> d10, d9;
  for (int i = 0; i < 10; ++i) d10.push_back(i / 3.0);
  for (int i = 0; i < 9; ++i) d9.push_back(i / 3.0);
  CHECK(from_vector(d10, {10}).str() ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
        "        3.0000], dtype=torch.float64)");
  CHECK(from_vector(d9, {9}).str() ==
        "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667],\n"
        "       dtype=torch.float64)");
}

TEST_CASE("printing: summarizes above 1000 elements") {
  CHECK(range_i64(2000, {2000}).str() == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  CHECK(arange(0, 1500, 1, kInt16).str() == "tensor([   0,    1,    2,  ..., 1497, 1498, 1499], dtype=torch.int16)");
  CHECK(range_f32(3000, {1000, 3}).str() ==
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00],\n        [3.0000e+00, 4.0000e+00, 5.0000e+00],\n"
        "        [6.0000e+00, 7.0000e+00, 8.0000e+00],\n        ...,\n"
        "        [2.9910e+03, 2.9920e+03, 2.9930e+03],\n        [2.9940e+03, 2.9950e+03, 2.9960e+03],\n"
        "        [2.9970e+03, 2.9980e+03, 2.9990e+03]])");
  CHECK(range_f32(2000, {40, 50}).str() ==
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
        "         4.9000e+01],\n"
        "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
        "         9.9000e+01],\n"
        "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
        "         1.4900e+02],\n"
        "        ...,\n"
        "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
        "         1.8990e+03],\n"
        "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
        "         1.9490e+03],\n"
        "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])");
  CHECK(range_i64(1200, {3, 20, 20}).str() ==
        "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n"
        "         [  20,   21,   22,  ...,   37,   38,   39],\n"
        "         [  40,   41,   42,  ...,   57,   58,   59],\n"
        "         ...,\n"
        "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
        "         [ 360,  361,  362,  ...,  377,  378,  379],\n"
        "         [ 380,  381,  382,  ...,  397,  398,  399]],\n"
        "\n"
        "        [[ 400,  401,  402,  ...,  417,  418,  419],\n"
        "         [ 420,  421,  422,  ...,  437,  438,  439],\n"
        "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
        "         ...,\n"
        "         [ 740,  741,  742,  ...,  757,  758,  759],\n"
        "         [ 760,  761,  762,  ...,  777,  778,  779],\n"
        "         [ 780,  781,  782,  ...,  797,  798,  799]],\n"
        "\n"
        "        [[ 800,  801,  802,  ...,  817,  818,  819],\n"
        "         [ 820,  821,  822,  ...,  837,  838,  839],\n"
        "         [ 840,  841,  842,  ...,  857,  858,  859],\n"
        "         ...,\n"
        "         [1140, 1141, 1142,  ..., 1157, 1158, 1159],\n"
        "         [1160, 1161, 1162,  ..., 1177, 1178, 1179],\n"
        "         [1180, 1181, 1182,  ..., 1197, 1198, 1199]]])");
}

TEST_CASE("printing: more summarized and wide cases") {
  std::vector<float> f;
  for (int i = 0; i < 1010; ++i) f.push_back(float(i) / 1000.0f);
  CHECK(from_vector(f, {2, 505}).str() ==
        "tensor([[0.0000e+00, 1.0000e-03, 2.0000e-03,  ..., 5.0200e-01, 5.0300e-01,\n"
        "         5.0400e-01],\n"
        "        [5.0500e-01, 5.0600e-01, 5.0700e-01,  ..., 1.0070e+00, 1.0080e+00,\n"
        "         1.0090e+00]])");
  std::vector<complex<float>> c;
  for (int i = 0; i < 1001; ++i) c.push_back({float(i), float(-i)});
  CHECK(from_vector(c, {1001}).str() ==
        "tensor([   0.+0.j,    1.-1.j,    2.-2.j,  ...,  998.-998.j,\n"
        "         999.-999.j, 1000.-1000.j])");
  CHECK(make<double>({1e-3, 1.5, 1e7, -2}, {2, 2}).str() ==
        "tensor([[ 1.0000e-03,  1.5000e+00],\n        [ 1.0000e+07, -2.0000e+00]], dtype=torch.float64)");
  CHECK(make<int64_t>({int64_t(1) << 62, -5}, {2}).str() == "tensor([4611686018427387904,                  -5])");
  CHECK(make<complex<float>>({{float(kNaN), 0}}, {1}).str() == "tensor([nan+0.j])");
}

TEST_CASE("printing: views, autograd suffix, shape_str and operator<<") {
  Tensor t = range_f32(6, {2, 3}).as_strided_view({3, 2}, {1, 3}, 0);  // .t()
  CHECK(t.str() == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])");
  Tensor g = ones({2});
  g.impl()->autograd_or_create().requires_grad = true;
  CHECK(g.str() == "tensor([1., 1.], requires_grad=True)");
  g.impl()->clear_autograd();
  CHECK(g.str() == "tensor([1., 1.])");
  CHECK(t.shape_str() == "[3, 2]");
  CHECK(shape_str({}) == "[]");
  std::ostringstream os;
  os << scalar_tensor(2, kInt64);
  CHECK(os.str() == "tensor(2)");
  CHECK(Tensor().str() == "[ Tensor (undefined) ]");
}
