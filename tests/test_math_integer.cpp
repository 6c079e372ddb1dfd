// kiln::math on integer compute types against PyTorch 1.13 (torch on one-element tensors),
// plus the cases where kiln defines what PyTorch raises on or leaves undefined.
#include <doctest/doctest.h>
#include <cstdint>
#include <limits>
#include <string>
#include "kiln/common/math.h"

namespace kiln::mathtest {
namespace {

#define IFN1(expr) [](T a) -> T { using namespace kiln::math; return T(expr); }
#define IFN2(expr) [](T a, T b) -> T { using namespace kiln::math; return T(expr); }

template <typename T, size_t N>
struct IntCase {
  const char* name;
  T (*f1)(T) = nullptr;
  T (*f2)(T, T) = nullptr;
  T want[N];
  IntCase(const char* n, T (*f)(T), std::initializer_list<T> w) : name(n), f1(f) { fill(w); }
  IntCase(const char* n, T (*f)(T, T), std::initializer_list<T> w) : name(n), f2(f) { fill(w); }
  void fill(std::initializer_list<T> w) {
    size_t i = 0;
    for (T v : w) want[i++] = v;
  }
};

template <typename T, size_t N, size_t M>
void check_cases(const T (&a)[N], const T (&b)[N], const IntCase<T, N> (&cases)[M]) {
  for (const auto& c : cases) {
    for (size_t i = 0; i < N; ++i) {
      INFO("function ", std::string(c.name), " a = ", int64_t(a[i]), " b = ", int64_t(b[i]));
      T got = c.f1 ? c.f1(a[i]) : c.f2(a[i], b[i]);
      CHECK(int64_t(got) == int64_t(c.want[i]));
    }
  }
}

// Division ops by 0 appear with expected 0: PyTorch raises ZeroDivisionError there.

TEST_CASE("math: int8 functions match PyTorch") {
  using T = int8_t;
  const T a[] = {7, -7, 7, -7, 0, 1, -1, 100, -100, 13, 2, -2, 3, -128, 127, -1, 1, 0};
  const T b[] = {3, 3, -3, -3, 5, -1, 2, 7, 7, 1, 7, 7, 5, -1, 2, -3, -4, 0};
  constexpr size_t N = sizeof(a) / sizeof(a[0]);
  const IntCase<T, N> cases[] = {
    {"abs", IFN1(abs(a)), {7, 7, 7, 7, 0, 1, 1, 100, 100, 13, 2, 2, 3, -128, 127, 1, 1, 0}},
    {"sign", IFN1(sign(a)), {1, -1, 1, -1, 0, 1, -1, 1, -1, 1, 1, -1, 1, -1, 1, -1, 1, 0}},
    {"neg", IFN1(-a), {-7, 7, -7, 7, 0, -1, 1, -100, 100, -13, -2, 2, -3, -128, -127, 1, -1, 0}},
    {"relu", IFN1(relu(a)), {7, 0, 7, 0, 0, 1, 0, 100, 0, 13, 2, 0, 3, 0, 127, 0, 1, 0}},
    {"clamp", IFN1(clamp(a, T(-2), T(5))), {5, -2, 5, -2, 0, 1, -1, 5, -2, 5, 2, -2, 3, -2, 5, -1, 1, 0}},
    {"bitwise_not", IFN1(bitwise_not(a)), {-8, 6, -8, 6, -1, -2, 0, -101, 99, -14, -3, 1, -4, 127, -128, 0, -2, -1}},
    {"pow", IFN2(pow(a, b)), {87, -87, 0, 0, 0, 1, 1, 0, 0, 13, -128, -128, -13, 0, 1, -1, 1, 1}},
    {"maximum", IFN2(maximum(a, b)), {7, 3, 7, -3, 5, 1, 2, 100, 7, 13, 7, 7, 5, -1, 127, -1, 1, 0}},
    {"minimum", IFN2(minimum(a, b)), {3, -7, -3, -7, 0, -1, -1, 7, -100, 1, 2, -2, 3, -128, 2, -3, -4, 0}},
    {"bitwise_and", IFN2(bitwise_and(a, b)), {3, 1, 5, -7, 0, 1, 2, 4, 4, 1, 2, 6, 1, -128, 2, -3, 0, 0}},
    {"bitwise_or", IFN2(bitwise_or(a, b)), {7, -5, -1, -3, 5, -1, -1, 103, -97, 13, 7, -1, 7, -1, 127, -1, -3, 0}},
    {"bitwise_xor", IFN2(bitwise_xor(a, b)), {4, -6, -6, 4, 5, -2, -3, 99, -101, 12, 5, -7, 6, 127, 125, 2, -3, 0}},
    {"div_trunc", IFN2(div_trunc(a, b)), {2, -2, -2, 2, 0, -1, 0, 14, -14, 13, 0, 0, 0, -128, 63, 0, 0, 0}},
    {"div_floor", IFN2(div_floor(a, b)), {2, -3, -3, 2, 0, -1, -1, 14, -15, 13, 0, -1, 0, -128, 63, 0, -1, 0}},
    {"python_mod", IFN2(python_mod(a, b)), {1, 2, -2, -1, 0, 0, 1, 2, 5, 0, 2, 5, 3, 0, 1, -1, -3, 0}},
    {"fmod", IFN2(fmod(a, b)), {1, -1, 1, -1, 0, 0, -1, 2, -2, 0, 2, -2, 3, 0, 1, -1, 1, 0}},
    {"add alpha 3", IFN2(a + T(3) * b), {16, 2, -2, -16, 15, -2, 5, 121, -79, 16, 23, 19, 18, 125, -123, -10, -11, 0}},
    {"mul", IFN2(a * b), {21, -21, -21, 21, 0, -1, -2, -68, 68, 13, 14, -14, 15, -128, -2, 3, -4, 0}},
  };
  check_cases(a, b, cases);
}

TEST_CASE("math: int16 functions match PyTorch") {
  using T = int16_t;
  const T a[] = {7, -7, 7, -7, 0, 1, -1, 100, -100, 13, 2, -2, 3, -128, 127, -1, 1, 0};
  const T b[] = {3, 3, -3, -3, 5, -1, 2, 7, 7, 1, 7, 7, 5, -1, 2, -3, -4, 0};
  constexpr size_t N = sizeof(a) / sizeof(a[0]);
  const IntCase<T, N> cases[] = {
    {"abs", IFN1(abs(a)), {7, 7, 7, 7, 0, 1, 1, 100, 100, 13, 2, 2, 3, 128, 127, 1, 1, 0}},
    {"sign", IFN1(sign(a)), {1, -1, 1, -1, 0, 1, -1, 1, -1, 1, 1, -1, 1, -1, 1, -1, 1, 0}},
    {"neg", IFN1(-a), {-7, 7, -7, 7, 0, -1, 1, -100, 100, -13, -2, 2, -3, 128, -127, 1, -1, 0}},
    {"relu", IFN1(relu(a)), {7, 0, 7, 0, 0, 1, 0, 100, 0, 13, 2, 0, 3, 0, 127, 0, 1, 0}},
    {"clamp", IFN1(clamp(a, T(-2), T(5))), {5, -2, 5, -2, 0, 1, -1, 5, -2, 5, 2, -2, 3, -2, 5, -1, 1, 0}},
    {"bitwise_not", IFN1(bitwise_not(a)), {-8, 6, -8, 6, -1, -2, 0, -101, 99, -14, -3, 1, -4, 127, -128, 0, -2, -1}},
    {"pow", IFN2(pow(a, b)), {343, -343, 0, 0, 0, 1, 1, 16384, -16384, 13, 128, -128, 243, 0, 16129, -1, 1, 1}},
    {"maximum", IFN2(maximum(a, b)), {7, 3, 7, -3, 5, 1, 2, 100, 7, 13, 7, 7, 5, -1, 127, -1, 1, 0}},
    {"minimum", IFN2(minimum(a, b)), {3, -7, -3, -7, 0, -1, -1, 7, -100, 1, 2, -2, 3, -128, 2, -3, -4, 0}},
    {"bitwise_and", IFN2(bitwise_and(a, b)), {3, 1, 5, -7, 0, 1, 2, 4, 4, 1, 2, 6, 1, -128, 2, -3, 0, 0}},
    {"bitwise_or", IFN2(bitwise_or(a, b)), {7, -5, -1, -3, 5, -1, -1, 103, -97, 13, 7, -1, 7, -1, 127, -1, -3, 0}},
    {"bitwise_xor", IFN2(bitwise_xor(a, b)), {4, -6, -6, 4, 5, -2, -3, 99, -101, 12, 5, -7, 6, 127, 125, 2, -3, 0}},
    {"div_trunc", IFN2(div_trunc(a, b)), {2, -2, -2, 2, 0, -1, 0, 14, -14, 13, 0, 0, 0, 128, 63, 0, 0, 0}},
    {"div_floor", IFN2(div_floor(a, b)), {2, -3, -3, 2, 0, -1, -1, 14, -15, 13, 0, -1, 0, 128, 63, 0, -1, 0}},
    {"python_mod", IFN2(python_mod(a, b)), {1, 2, -2, -1, 0, 0, 1, 2, 5, 0, 2, 5, 3, 0, 1, -1, -3, 0}},
    {"fmod", IFN2(fmod(a, b)), {1, -1, 1, -1, 0, 0, -1, 2, -2, 0, 2, -2, 3, 0, 1, -1, 1, 0}},
    {"add alpha 3", IFN2(a + T(3) * b), {16, 2, -2, -16, 15, -2, 5, 121, -79, 16, 23, 19, 18, -131, 133, -10, -11, 0}},
    {"mul", IFN2(a * b), {21, -21, -21, 21, 0, -1, -2, 700, -700, 13, 14, -14, 15, 128, 254, 3, -4, 0}},
  };
  check_cases(a, b, cases);
}

TEST_CASE("math: int32 functions match PyTorch") {
  using T = int32_t;
  const T a[] = {7, -7, 7, -7, 0, 1, -1, 100, -100, 13, 2, -2, 3, -128, 127, -1, 1, 0};
  const T b[] = {3, 3, -3, -3, 5, -1, 2, 7, 7, 1, 7, 7, 5, -1, 2, -3, -4, 0};
  constexpr size_t N = sizeof(a) / sizeof(a[0]);
  const IntCase<T, N> cases[] = {
    {"abs", IFN1(abs(a)), {7, 7, 7, 7, 0, 1, 1, 100, 100, 13, 2, 2, 3, 128, 127, 1, 1, 0}},
    {"sign", IFN1(sign(a)), {1, -1, 1, -1, 0, 1, -1, 1, -1, 1, 1, -1, 1, -1, 1, -1, 1, 0}},
    {"neg", IFN1(-a), {-7, 7, -7, 7, 0, -1, 1, -100, 100, -13, -2, 2, -3, 128, -127, 1, -1, 0}},
    {"relu", IFN1(relu(a)), {7, 0, 7, 0, 0, 1, 0, 100, 0, 13, 2, 0, 3, 0, 127, 0, 1, 0}},
    {"clamp", IFN1(clamp(a, T(-2), T(5))), {5, -2, 5, -2, 0, 1, -1, 5, -2, 5, 2, -2, 3, -2, 5, -1, 1, 0}},
    {"bitwise_not", IFN1(bitwise_not(a)), {-8, 6, -8, 6, -1, -2, 0, -101, 99, -14, -3, 1, -4, 127, -128, 0, -2, -1}},
    {"pow", IFN2(pow(a, b)), {343, -343, 0, 0, 0, 1, 1, 276447232, -276447232, 13, 128, -128, 243, 0, 16129, -1, 1, 1}},
    {"maximum", IFN2(maximum(a, b)), {7, 3, 7, -3, 5, 1, 2, 100, 7, 13, 7, 7, 5, -1, 127, -1, 1, 0}},
    {"minimum", IFN2(minimum(a, b)), {3, -7, -3, -7, 0, -1, -1, 7, -100, 1, 2, -2, 3, -128, 2, -3, -4, 0}},
    {"bitwise_and", IFN2(bitwise_and(a, b)), {3, 1, 5, -7, 0, 1, 2, 4, 4, 1, 2, 6, 1, -128, 2, -3, 0, 0}},
    {"bitwise_or", IFN2(bitwise_or(a, b)), {7, -5, -1, -3, 5, -1, -1, 103, -97, 13, 7, -1, 7, -1, 127, -1, -3, 0}},
    {"bitwise_xor", IFN2(bitwise_xor(a, b)), {4, -6, -6, 4, 5, -2, -3, 99, -101, 12, 5, -7, 6, 127, 125, 2, -3, 0}},
    {"div_trunc", IFN2(div_trunc(a, b)), {2, -2, -2, 2, 0, -1, 0, 14, -14, 13, 0, 0, 0, 128, 63, 0, 0, 0}},
    {"div_floor", IFN2(div_floor(a, b)), {2, -3, -3, 2, 0, -1, -1, 14, -15, 13, 0, -1, 0, 128, 63, 0, -1, 0}},
    {"python_mod", IFN2(python_mod(a, b)), {1, 2, -2, -1, 0, 0, 1, 2, 5, 0, 2, 5, 3, 0, 1, -1, -3, 0}},
    {"fmod", IFN2(fmod(a, b)), {1, -1, 1, -1, 0, 0, -1, 2, -2, 0, 2, -2, 3, 0, 1, -1, 1, 0}},
    {"add alpha 3", IFN2(a + T(3) * b), {16, 2, -2, -16, 15, -2, 5, 121, -79, 16, 23, 19, 18, -131, 133, -10, -11, 0}},
    {"mul", IFN2(a * b), {21, -21, -21, 21, 0, -1, -2, 700, -700, 13, 14, -14, 15, 128, 254, 3, -4, 0}},
  };
  check_cases(a, b, cases);
}

TEST_CASE("math: int64 functions match PyTorch") {
  using T = int64_t;
  const T a[] = {7, -7, 7, -7, 0, 1, -1, 100, -100, 13, 2, -2, 3, -128, 127, -1, 1, 0};
  const T b[] = {3, 3, -3, -3, 5, -1, 2, 7, 7, 1, 7, 7, 5, -1, 2, -3, -4, 0};
  constexpr size_t N = sizeof(a) / sizeof(a[0]);
  const IntCase<T, N> cases[] = {
    {"abs", IFN1(abs(a)), {7, 7, 7, 7, 0, 1, 1, 100, 100, 13, 2, 2, 3, 128, 127, 1, 1, 0}},
    {"sign", IFN1(sign(a)), {1, -1, 1, -1, 0, 1, -1, 1, -1, 1, 1, -1, 1, -1, 1, -1, 1, 0}},
    {"neg", IFN1(-a), {-7, 7, -7, 7, 0, -1, 1, -100, 100, -13, -2, 2, -3, 128, -127, 1, -1, 0}},
    {"relu", IFN1(relu(a)), {7, 0, 7, 0, 0, 1, 0, 100, 0, 13, 2, 0, 3, 0, 127, 0, 1, 0}},
    {"clamp", IFN1(clamp(a, T(-2), T(5))), {5, -2, 5, -2, 0, 1, -1, 5, -2, 5, 2, -2, 3, -2, 5, -1, 1, 0}},
    {"bitwise_not", IFN1(bitwise_not(a)), {-8, 6, -8, 6, -1, -2, 0, -101, 99, -14, -3, 1, -4, 127, -128, 0, -2, -1}},
    {"pow", IFN2(pow(a, b)), {343, -343, 0, 0, 0, 1, 1, 100000000000000, -100000000000000, 13, 128, -128, 243, 0, 16129, -1, 1, 1}},
    {"maximum", IFN2(maximum(a, b)), {7, 3, 7, -3, 5, 1, 2, 100, 7, 13, 7, 7, 5, -1, 127, -1, 1, 0}},
    {"minimum", IFN2(minimum(a, b)), {3, -7, -3, -7, 0, -1, -1, 7, -100, 1, 2, -2, 3, -128, 2, -3, -4, 0}},
    {"bitwise_and", IFN2(bitwise_and(a, b)), {3, 1, 5, -7, 0, 1, 2, 4, 4, 1, 2, 6, 1, -128, 2, -3, 0, 0}},
    {"bitwise_or", IFN2(bitwise_or(a, b)), {7, -5, -1, -3, 5, -1, -1, 103, -97, 13, 7, -1, 7, -1, 127, -1, -3, 0}},
    {"bitwise_xor", IFN2(bitwise_xor(a, b)), {4, -6, -6, 4, 5, -2, -3, 99, -101, 12, 5, -7, 6, 127, 125, 2, -3, 0}},
    {"div_trunc", IFN2(div_trunc(a, b)), {2, -2, -2, 2, 0, -1, 0, 14, -14, 13, 0, 0, 0, 128, 63, 0, 0, 0}},
    {"div_floor", IFN2(div_floor(a, b)), {2, -3, -3, 2, 0, -1, -1, 14, -15, 13, 0, -1, 0, 128, 63, 0, -1, 0}},
    {"python_mod", IFN2(python_mod(a, b)), {1, 2, -2, -1, 0, 0, 1, 2, 5, 0, 2, 5, 3, 0, 1, -1, -3, 0}},
    {"fmod", IFN2(fmod(a, b)), {1, -1, 1, -1, 0, 0, -1, 2, -2, 0, 2, -2, 3, 0, 1, -1, 1, 0}},
    {"add alpha 3", IFN2(a + T(3) * b), {16, 2, -2, -16, 15, -2, 5, 121, -79, 16, 23, 19, 18, -131, 133, -10, -11, 0}},
    {"mul", IFN2(a * b), {21, -21, -21, 21, 0, -1, -2, 700, -700, 13, 14, -14, 15, 128, 254, 3, -4, 0}},
  };
  check_cases(a, b, cases);
}

TEST_CASE("math: uint8 functions match PyTorch") {
  using T = uint8_t;
  const T a[] = {7, 200, 255, 0, 1, 100, 13, 2, 3, 128};
  const T b[] = {3, 3, 2, 5, 7, 7, 1, 7, 5, 2};
  constexpr size_t N = sizeof(a) / sizeof(a[0]);
  const IntCase<T, N> cases[] = {
    {"abs", IFN1(abs(a)), {7, 200, 255, 0, 1, 100, 13, 2, 3, 128}},
    {"sign", IFN1(sign(a)), {1, 1, 1, 0, 1, 1, 1, 1, 1, 1}},
    {"neg", IFN1(-a), {249, 56, 1, 0, 255, 156, 243, 254, 253, 128}},
    {"relu", IFN1(relu(a)), {7, 200, 255, 0, 1, 100, 13, 2, 3, 128}},
    {"clamp", IFN1(clamp(a, T(0), T(5))), {5, 5, 5, 0, 1, 5, 5, 2, 3, 5}},
    {"bitwise_not", IFN1(bitwise_not(a)), {248, 55, 0, 255, 254, 155, 242, 253, 252, 127}},
    {"pow", IFN2(pow(a, b)), {87, 0, 1, 0, 1, 0, 13, 128, 243, 0}},
    {"maximum", IFN2(maximum(a, b)), {7, 200, 255, 5, 7, 100, 13, 7, 5, 128}},
    {"minimum", IFN2(minimum(a, b)), {3, 3, 2, 0, 1, 7, 1, 2, 3, 2}},
    {"bitwise_and", IFN2(bitwise_and(a, b)), {3, 0, 2, 0, 1, 4, 1, 2, 1, 0}},
    {"bitwise_or", IFN2(bitwise_or(a, b)), {7, 203, 255, 5, 7, 103, 13, 7, 7, 130}},
    {"bitwise_xor", IFN2(bitwise_xor(a, b)), {4, 203, 253, 5, 6, 99, 12, 5, 6, 130}},
    {"div_trunc", IFN2(div_trunc(a, b)), {2, 66, 127, 0, 0, 14, 13, 0, 0, 64}},
    {"div_floor", IFN2(div_floor(a, b)), {2, 66, 127, 0, 0, 14, 13, 0, 0, 64}},
    {"python_mod", IFN2(python_mod(a, b)), {1, 2, 1, 0, 1, 2, 0, 2, 3, 0}},
    {"fmod", IFN2(fmod(a, b)), {1, 2, 1, 0, 1, 2, 0, 2, 3, 0}},
    {"add alpha 3", IFN2(a + T(3) * b), {16, 209, 5, 15, 22, 121, 16, 23, 18, 134}},
    {"mul", IFN2(a * b), {21, 88, 254, 0, 7, 188, 13, 14, 15, 0}},
  };
  check_cases(a, b, cases);
}

TEST_CASE("math: integer division never traps") {
  using namespace kiln::math;
  constexpr int32_t i32min = std::numeric_limits<int32_t>::min();
  constexpr int64_t i64min = std::numeric_limits<int64_t>::min();
  // INT_MIN / -1 overflows (SIGFPE on x86): the quotient wraps, the remainder is 0
  CHECK(div_trunc(i32min, int32_t(-1)) == i32min);
  CHECK(div_floor(i64min, int64_t(-1)) == i64min);
  CHECK(div_trunc(i64min, int64_t(-1)) == i64min);
  CHECK(python_mod(i64min, int64_t(-1)) == 0);
  CHECK(fmod(i32min, int32_t(-1)) == 0);
  CHECK(div_floor(int8_t(-128), int8_t(-1)) == -128);
  // division by zero: 0 (PyTorch raises ZeroDivisionError)
  CHECK(div_trunc(int64_t(5), int64_t(0)) == 0);
  CHECK(div_floor(int32_t(-5), int32_t(0)) == 0);
  CHECK(python_mod(uint8_t(5), uint8_t(0)) == 0);
  CHECK(fmod(int16_t(-5), int16_t(0)) == 0);
  CHECK(div_floor(uint8_t(200), uint8_t(7)) == 28);
  // abs and negation wrap
  CHECK(abs(i64min) == i64min);
  CHECK(abs(i32min) == i32min);
  CHECK(uint8_t(-uint8_t(1)) == 255);
  // pow wraps in int64 (torch: 3 ** 41 = -420491770248316829) and follows PyTorch for negative exponents
  CHECK(pow(int64_t(3), int64_t(41)) == -420491770248316829LL);
  CHECK(pow(uint8_t(255), uint8_t(2)) == 1);
  CHECK(pow(int64_t(-1), i64min) == 1);
  CHECK(pow(int32_t(-1), int32_t(-7)) == -1);
  CHECK(pow(int32_t(0), int32_t(-1)) == 0);
  CHECK(pow(int16_t(2), int16_t(-1)) == 0);
}

// PyTorch 1.13 shifts by C's rules (undefined past the width; x86 masks the count); kiln
// follows PyTorch 2's defined rules: negative or >= width gives 0 for <<, the sign fill for >>.
TEST_CASE("math: shifts saturate outside 0..bit width") {
  using namespace kiln::math;
  CHECK(shift_left(int8_t(1), int8_t(7)) == -128);
  CHECK(shift_left(int8_t(127), int8_t(1)) == -2);
  CHECK(shift_left(int8_t(-3), int8_t(2)) == -12);
  CHECK(shift_left(int8_t(1), int8_t(8)) == 0);
  CHECK(shift_left(int8_t(5), int8_t(-1)) == 0);
  CHECK(shift_right(int8_t(-100), int8_t(2)) == -25);
  CHECK(shift_right(int8_t(-128), int8_t(7)) == -1);
  CHECK(shift_right(int8_t(-100), int8_t(8)) == -1);
  CHECK(shift_right(int8_t(100), int8_t(8)) == 0);
  CHECK(shift_right(int8_t(-100), int8_t(-1)) == -1);
  CHECK(shift_right(int8_t(100), int8_t(-1)) == 0);
  CHECK(shift_left(int16_t(1), int16_t(15)) == std::numeric_limits<int16_t>::min());
  CHECK(shift_right(int16_t(-32768), int16_t(16)) == -1);
  CHECK(shift_left(int32_t(1), int32_t(31)) == std::numeric_limits<int32_t>::min());
  CHECK(shift_left(int32_t(3), int32_t(30)) == -1073741824);
  CHECK(shift_left(int32_t(1), int32_t(32)) == 0);
  CHECK(shift_left(int32_t(1), int32_t(-1)) == 0);
  CHECK(shift_right(int32_t(-100), int32_t(31)) == -1);
  CHECK(shift_right(int32_t(-100), int32_t(32)) == -1);
  CHECK(shift_right(int32_t(100), int32_t(40)) == 0);
  CHECK(shift_left(int64_t(1), int64_t(63)) == std::numeric_limits<int64_t>::min());
  CHECK(shift_left(int64_t(1), int64_t(64)) == 0);
  CHECK(shift_left(int64_t(1), int64_t(100)) == 0);
  CHECK(shift_left(int64_t(-1), int64_t(4)) == -16);
  CHECK(shift_right(int64_t(-1), int64_t(64)) == -1);
  CHECK(shift_right(std::numeric_limits<int64_t>::max(), int64_t(62)) == 1);
  CHECK(shift_left(uint8_t(1), uint8_t(7)) == 128);
  CHECK(shift_left(uint8_t(255), uint8_t(1)) == 254);
  CHECK(shift_left(uint8_t(1), uint8_t(8)) == 0);
  CHECK(shift_left(uint8_t(1), uint8_t(200)) == 0);
  CHECK(shift_right(uint8_t(255), uint8_t(7)) == 1);
  CHECK(shift_right(uint8_t(255), uint8_t(8)) == 0);
  CHECK(shift_right(uint8_t(200), uint8_t(130)) == 0);
}

}  // namespace
}  // namespace kiln::mathtest
