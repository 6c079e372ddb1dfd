// copy_ between every pair of the 12 dtypes (kernels/cpu/copy.cpp): a same-dtype copy moves bits,
// a pair with a pivot dtype (int64, float32, float64, complex128) has a loop of its own, and the
// rest convert through a pivot in two passes. Each path must give the direct cast's value
// (kiln/common/convert.h, PyTorch's cast semantics), element by element, for dense, strided and
// transposed sources, including NaN, infinities, out-of-range and fractional values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include "kiln/common/convert.h"
#include "kiln/core.h"

using namespace kiln;

namespace {

constexpr DType kAllDTypes[] = {DType::Bool,    DType::UInt8,   DType::Int8,      DType::Int16,
                                DType::Int32,   DType::Int64,   DType::Float16,   DType::BFloat16,
                                DType::Float32, DType::Float64, DType::Complex64, DType::Complex128};

// Values where casts differ: signs, fractions, the edges of each integer and 16-bit float range,
// integers a float32 cannot hold, NaN and infinities.
const double kValues[] = {0,
                          1,
                          -1,
                          0.5,
                          -2.75,
                          3.5,
                          100.25,
                          -128,
                          127,
                          255,
                          256,
                          300.5,
                          -129,
                          32767,
                          -32769,
                          65504,
                          70000.5,
                          16777217,
                          -2147483648.,
                          2147483647.,
                          1e10,
                          -1e-3,
                          std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
constexpr int64_t kCount = int64_t(sizeof(kValues) / sizeof(kValues[0]));

// The source's i-th element: kValues cycled, with an imaginary part for complex dtypes.
template <typename S>
S source_value(int64_t i) {
  const double v = kValues[i % kCount];
  if constexpr (is_complex_v<S>) {
    using V = typename S::value_type;
    return S(V(v), V(-0.5 * v + 1));
  } else {
    return detail::convert<S>(v);
  }
}

template <typename T>
bool same_value(T a, T b) {
  if (std::memcmp(&a, &b, sizeof(T)) == 0) return true;
  if constexpr (is_complex_v<T>) {
    return same_value(a.re, b.re) && same_value(a.im, b.im);
  } else if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return std::isnan(double(float(a))) && std::isnan(double(float(b)));  // any NaN payload
  }
}

// Fills `t` (contiguous, dtype S) with source_value(0), source_value(1), ...
template <typename S>
void fill_source(const Tensor& t) {
  S* p = static_cast<S*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = source_value<S>(i);
}

// Counts the elements of dst (contiguous, dtype D) that differ from convert<D> of the source
// element source_index[i].
template <typename D, typename S>
int64_t count_mismatches(const Tensor& dst, const std::vector<int64_t>& source_index) {
  const D* got = static_cast<const D*>(dst.data_ptr());
  int64_t bad = 0;
  for (size_t i = 0; i < source_index.size(); ++i)
    bad += same_value(got[i], detail::convert<D>(source_value<S>(source_index[i]))) ? 0 : 1;
  return bad;
}

template <typename D, typename S>
void check_pair() {
  const DType d = dtype_of<D>, s = dtype_of<S>;
  const std::string pair = std::string(dtype_name(s)) + " -> " + dtype_name(d);
  // dense
  Tensor src = empty({kCount}, TensorOptions(s));
  fill_source<S>(src);
  Tensor dst = empty({kCount}, TensorOptions(d));
  dst.copy_(src);
  std::vector<int64_t> index;
  for (int64_t i = 0; i < kCount; ++i) index.push_back(i);
  const int64_t dense_bad = count_mismatches<D, S>(dst, index);
  CHECK_MESSAGE(dense_bad == 0, "dense ", pair);
  // every other element (a strided run)
  Tensor wide = empty({kCount, 2}, TensorOptions(s));
  fill_source<S>(wide);
  Tensor strided = empty({kCount}, TensorOptions(d));
  strided.copy_(wide.select(1, 1));
  for (int64_t i = 0; i < kCount; ++i) index[size_t(i)] = 2 * i + 1;
  const int64_t strided_bad = count_mismatches<D, S>(strided, index);
  CHECK_MESSAGE(strided_bad == 0, "strided ", pair);
  // a transposed source, large enough for the tiled walk
  Tensor square = empty({24, 16}, TensorOptions(s));
  fill_source<S>(square);
  Tensor transposed = empty({16, 24}, TensorOptions(d));
  transposed.copy_(square.t());
  index.assign(size_t(16 * 24), 0);
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 24; ++j) index[size_t(i * 24 + j)] = j * 16 + i;
  const int64_t transposed_bad = count_mismatches<D, S>(transposed, index);
  CHECK_MESSAGE(transposed_bad == 0, "transposed ", pair);
}

}  // namespace

TEST_CASE("copy_: every dtype pair gives the direct cast's values, dense, strided and transposed") {
  for (DType d : kAllDTypes)
    for (DType s : kAllDTypes)
      visit_dtype(
          d, [&](auto dzero) { visit_dtype(s, [&](auto szero) { check_pair<decltype(dzero), decltype(szero)>(); }); });
}

TEST_CASE("copy_: pairs without a loop of their own, as PyTorch casts them") {
  // int32 -> float16 goes through float64: 70000 overflows to inf, 2049 rounds to even (2048)
  Tensor i32 = empty({3}, TensorOptions(DType::Int32));
  int32_t* p = static_cast<int32_t*>(i32.data_ptr());
  p[0] = 70000, p[1] = 2049, p[2] = -3;
  Tensor f16 = empty({3}, TensorOptions(DType::Float16));
  f16.copy_(i32);
  CHECK(f16.to_vector<float>() == std::vector<float>{std::numeric_limits<float>::infinity(), 2048, -3});
  // int8 -> uint8 goes through int64 and wraps: -1 -> 255
  Tensor i8 = empty({2}, TensorOptions(DType::Int8));
  static_cast<int8_t*>(i8.data_ptr())[0] = -1;
  static_cast<int8_t*>(i8.data_ptr())[1] = -128;
  Tensor u8 = empty({2}, TensorOptions(DType::UInt8));
  u8.copy_(i8);
  CHECK(u8.to_vector<int64_t>() == std::vector<int64_t>{255, 128});
  // complex64 -> bfloat16 keeps the real part
  Tensor c64 = empty({1}, TensorOptions(DType::Complex64));
  static_cast<complex<float>*>(c64.data_ptr())[0] = complex<float>(3.0f, -4.0f);
  Tensor bf = empty({1}, TensorOptions(DType::BFloat16));
  bf.copy_(c64);
  CHECK(bf.to_vector<float>() == std::vector<float>{3.0f});
}
