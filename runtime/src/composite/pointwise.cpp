// Pointwise ops composed of other ops: the default limits of nan_to_num, div's rounding modes.
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/_div_trunc.h"
#include "kiln/gen/api/_nan_to_num.h"
#include "kiln/gen/api/div.h"
#include "kiln/gen/api/floor_divide.h"
#include "kiln/gen/api/nan_to_num.h"

namespace kiln::composite {

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  // Defaults are the limits of self's own dtype (65504 for float16), as PyTorch.
  const double big = is_floating(self.dtype()) ? finfo(self.dtype()).max : 0.0;
  return kiln::_nan_to_num(self, nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big));
}

Tensor div_rounding(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return kiln::div(self, other);
  if (*rounding_mode == "trunc") return kiln::_div_trunc(self, other);
  if (*rounding_mode == "floor") return kiln::floor_divide(self, other);
  KILN_FAIL(ValueError, "div", "rounding_mode", "expected None, 'trunc' or 'floor', got '", *rounding_mode, "'");
}

}  // namespace kiln::composite
