#ifndef KILN_RUNTIME_INCLUDE_KILN_SCALAR_H_
#define KILN_RUNTIME_INCLUDE_KILN_SCALAR_H_
// A number without a tensor: bool, int64, double or complex<double>, as Python's numbers.
#include <cstdint>
#include <string>
#include <type_traits>
#include "kiln/common/convert.h"  // detail::float_to_int
#include "kiln/dtype.h"

namespace kiln {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float, Complex };
  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool b) : kind_(Kind::Bool) { v_.i = b; }
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  Scalar(I i) : kind_(Kind::Int) { v_.i = int64_t(i); }
  Scalar(double d) : kind_(Kind::Float) { v_.d = d; }
  Scalar(float f) : Scalar(double(f)) {}
  Scalar(Half h) : Scalar(double(float(h))) {}
  Scalar(BFloat16 h) : Scalar(double(float(h))) {}
  template <typename T>
  Scalar(complex<T> c) : kind_(Kind::Complex) { v_.c = {double(c.re), double(c.im)}; }

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }  // false for bool, as PyTorch
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  // dtype a wrapped number of this kind promotes as: bool, int64, float64 (default float), complex128
  DType dtype() const;

  // Convert to any element type (C++ cast semantics; complex -> real keeps the real part).
  template <typename T>
  T to() const {
    if constexpr (is_complex_v<T>) {
      using V = typename T::value_type;
      if (kind_ == Kind::Complex) return T(V(v_.c.re), V(v_.c.im));
      return T(V(to<double>()), V(0));
    } else if constexpr (std::is_same_v<T, bool>) {
      switch (kind_) {
        case Kind::Bool: case Kind::Int: return v_.i != 0;
        case Kind::Float: return v_.d != 0;
        default: return v_.c.re != 0 || v_.c.im != 0;
      }
    } else {
      switch (kind_) {
        case Kind::Bool: case Kind::Int: return T(v_.i);
        case Kind::Float: return to_real<T>(v_.d);
        default: return to_real<T>(v_.c.re);
      }
    }
  }
  template <typename T>
  static T to_real(double d) {
    if constexpr (std::is_integral_v<T>) return detail::float_to_int<T>(d);
    else return T(d);
  }
  double to_double() const { return to<double>(); }
  int64_t to_int() const { return to<int64_t>(); }
  std::string str() const;
  bool operator==(const Scalar& o) const;

 private:
  Kind kind_;
  union {
    int64_t i;
    double d;
    complex<double> c;
  } v_{};
};

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_SCALAR_H_
