#ifndef KILN_TESTS_SUPPORT_TEST_HELPERS_H_
#define KILN_TESTS_SUPPORT_TEST_HELPERS_H_
// Small assertions shared by the hand-written suites.
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "kiln/core.h"

namespace kiln::testing {

// The message of the E that f() throws; a test failure if it throws nothing.
template <typename E, typename Fn>
std::string error_text(Fn&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return "";
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Shape and values; NaN equals NaN, infinities exactly, others within `tol` relative (absolute below 1).
inline void expect_values(const Tensor& t, std::vector<int64_t> shape, std::vector<double> expected, double tol = 1e-6) {
  REQUIRE(t.defined());
  CHECK(t.sizes().vec() == shape);
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(expected[i])) CHECK(got[i] == expected[i]);
    else CHECK(std::fabs(got[i] - expected[i]) <= tol * std::max(1.0, std::fabs(expected[i])));
  }
}

// Same shape and exactly the same values, NaN equal to NaN (a view against its contiguous copy).
inline bool same_values(const Tensor& a, const Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return false;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

// A tensor's values in order to 1e-12 relative (autograd tests against PyTorch's float64 values).
inline void expect_close(const Tensor& t, const std::vector<double>& expected) {
  REQUIRE(t.defined());
  expect_values(t, t.sizes().vec(), expected, 1e-12);
}

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_TEST_HELPERS_H_
