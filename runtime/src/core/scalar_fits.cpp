// c10's overflow rules, so fill_ rejects exactly what PyTorch rejects.
#include "scalar_fits.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::detail {
namespace {

template <typename T> struct complex_value { using type = T; };
template <typename T> struct complex_value<complex<T>> { using type = T; };

// c10's checked_convert: does `v` fit `dtype`? Infinities fit floating types; unsigned types
// accept negative integers down to -max (they wrap, so `a - b` works on uint8); a complex
// value with an imaginary part does not fit a real type.
bool overflows(const Scalar& v, DType dtype) {
  if (dtype == DType::Bool || v.is_bool()) return false;
  auto out_of_range = [&](double lowest, double max, bool has_inf) {
    double re = v.to<double>();
    if (v.is_integral()) {
      int64_t i = v.to<int64_t>();
      if (lowest == 0 && i < 0) return double(-i) > max;  // unsigned wrap-around
      return double(i) < lowest || double(i) > max;
    }
    if (std::isinf(re) && has_inf) return false;
    if (std::isnan(re)) return !has_inf;  // NaN fits floating types only
    return re < lowest || re > max;
  };
  if (v.is_complex() && !kiln::is_complex(dtype) && v.to<complex<double>>().im != 0) return true;
  return visit_dtype(dtype, [&](auto zero) -> bool {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else {
      using V = std::conditional_t<is_complex_v<T>, typename complex_value<T>::type, T>;
      constexpr double kHalfMax = 65504.0, kBFloat16Max = 3.3895313892515355e38;
      if constexpr (std::is_same_v<V, Half>) return out_of_range(-kHalfMax, kHalfMax, true);
      else if constexpr (std::is_same_v<V, BFloat16>) return out_of_range(-kBFloat16Max, kBFloat16Max, true);
      else {
        bool bad = out_of_range(double(std::numeric_limits<V>::lowest()), double(std::numeric_limits<V>::max()),
                                std::numeric_limits<V>::has_infinity);
        if constexpr (is_complex_v<T>) {
          if (v.is_complex()) {
            double im = v.to<complex<double>>().im;
            bad = bad || (std::isfinite(im) && (im < double(std::numeric_limits<V>::lowest()) ||
                                                im > double(std::numeric_limits<V>::max())));
          }
        }
        return bad;
      }
    }
  });
}

}  // namespace

bool scalar_fits(const Scalar& v, DType dtype) { return !overflows(v, dtype); }

}  // namespace kiln::detail
