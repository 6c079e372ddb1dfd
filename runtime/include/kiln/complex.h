#ifndef KILN_RUNTIME_INCLUDE_KILN_COMPLEX_H_
#define KILN_RUNTIME_INCLUDE_KILN_COMPLEX_H_
// complex<T>: layout-compatible with std::complex<T>, usable on host and device.
#include <cmath>
#include <type_traits>
#include "kiln/macros.h"

namespace kiln {

template <typename T>
struct alignas(2 * sizeof(T)) complex {
  T re{}, im{};
  using value_type = T;
  constexpr complex() = default;
  KILN_HOST_DEVICE constexpr complex(T r, T i = T()) : re(r), im(i) {}
  template <typename U>
  KILN_HOST_DEVICE explicit constexpr complex(const complex<U>& o) : re(T(o.re)), im(T(o.im)) {}
  KILN_HOST_DEVICE constexpr T real() const { return re; }
  KILN_HOST_DEVICE constexpr T imag() const { return im; }
  // Casting complex to a real type keeps the real part (as PyTorch's copy does).
  template <typename U, typename = std::enable_if_t<std::is_arithmetic_v<U>>>
  KILN_HOST_DEVICE explicit constexpr operator U() const { return U(re); }
  KILN_HOST_DEVICE complex& operator+=(complex o) { re += o.re; im += o.im; return *this; }
  KILN_HOST_DEVICE complex& operator-=(complex o) { re -= o.re; im -= o.im; return *this; }
  KILN_HOST_DEVICE complex& operator*=(complex o) { return *this = *this * o; }
  KILN_HOST_DEVICE complex& operator/=(complex o) { return *this = *this / o; }

  KILN_HOST_DEVICE friend constexpr complex operator+(complex a, complex b) { return {a.re + b.re, a.im + b.im}; }
  KILN_HOST_DEVICE friend constexpr complex operator-(complex a, complex b) { return {a.re - b.re, a.im - b.im}; }
  KILN_HOST_DEVICE friend constexpr complex operator-(complex a) { return {-a.re, -a.im}; }
  KILN_HOST_DEVICE friend constexpr complex operator*(complex a, complex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  KILN_HOST_DEVICE friend complex operator/(complex a, complex b) {
    // Smith's algorithm: avoids overflow for large |b|
    using std::abs;
    if (abs(b.re) >= abs(b.im)) {
      if (b.re == T(0) && b.im == T(0)) return {a.re / abs(b.re), a.im / abs(b.im)};
      T r = b.im / b.re, d = b.re + b.im * r;
      return {(a.re + a.im * r) / d, (a.im - a.re * r) / d};
    }
    T r = b.re / b.im, d = b.im + b.re * r;
    return {(a.re * r + a.im) / d, (a.im * r - a.re) / d};
  }
  KILN_HOST_DEVICE friend constexpr bool operator==(complex a, complex b) { return a.re == b.re && a.im == b.im; }
  KILN_HOST_DEVICE friend constexpr bool operator!=(complex a, complex b) { return !(a == b); }
};

// Trait spelled is_complex_type: kiln::is_complex(DType) (dtype.h) owns the plain name.
template <typename T> struct is_complex_type : std::false_type {};
template <typename T> struct is_complex_type<complex<T>> : std::true_type {};
template <typename T> inline constexpr bool is_complex_v = is_complex_type<T>::value;

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_COMPLEX_H_
