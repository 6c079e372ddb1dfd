// Shortest round-trip digits (std::to_chars) laid out with Python's float_repr_style rules.
#include "number_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln::detail {
namespace {

// Shortest digits and decimal exponent of |v|: v = 0.d1d2d3... * 10^(exp10 + 1) style,
// returned as digits "d1d2d3" and the exponent of d1 (scientific exponent).
void shortest_digits(double v, std::string& digits, int& sci_exp) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string s(buf, res.ptr);
  size_t e = s.find('e');
  digits.clear();
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') digits += s[i];
  sci_exp = std::atoi(s.c_str() + e + 1);
}

// Python's repr without the ".0" suffix for integral values when `add_point_zero` is false
// (complex parts are printed that way: (1+2j), not (1.0+2.0j)).
std::string repr(double v, bool add_point_zero) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) return sign + (add_point_zero ? "0.0" : "0");
  std::string digits;
  int exp;
  shortest_digits(v, digits, exp);
  int n = int(digits.size());
  std::string out;
  if (exp < -4 || exp >= 16) {
    // scientific: d[.ddd]e[+-]XX with at least two exponent digits
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(size_t(-exp - 1), '0') + digits;
  } else if (exp + 1 >= n) {
    out = digits + std::string(size_t(exp + 1 - n), '0');
    if (add_point_zero) out += ".0";
  } else {
    out = digits.substr(0, size_t(exp + 1)) + "." + digits.substr(size_t(exp + 1));
  }
  return sign + out;
}

}  // namespace

std::string python_float_repr(double v) { return repr(v, true); }

std::string python_complex_repr(complex<double> c) {
  std::string im = repr(c.im, false) + "j";
  // a positive-zero real part is left out, as Python does: 1j, -2j
  if (c.re == 0 && !std::signbit(c.re)) return im;
  std::string re = repr(c.re, false);
  if (im[0] != '-') im = "+" + im;
  return "(" + re + im + ")";
}

}  // namespace kiln::detail
