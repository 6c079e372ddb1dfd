#ifndef KILN_TESTS_CUDA_DEVICE_COMPARE_H_
#define KILN_TESTS_CUDA_DEVICE_COMPARE_H_
// How the device suite compares a result brought back from the GPU with the CPU's.
#include <cmath>
#include <vector>
#include "kiln/core.h"

namespace kiln::testing {

// Same shape and dtype, |got - want| <= atol + rtol * |want|; NaN matches NaN and infinities
// match exactly.
inline bool close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (!got.sizes().equals(want.sizes()) || got.dtype() != want.dtype()) return false;
  std::vector<double> x = got.to_vector<double>(), y = want.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(y[i])) {
      if (!std::isnan(x[i])) return false;
    } else if (std::isinf(y[i])) {
      if (x[i] != y[i]) return false;
    } else if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) {
      return false;
    }
  }
  return true;
}

// The largest |got - want| (a complex difference's modulus), got brought back from the device.
inline double max_abs_error(const Tensor& got, const Tensor& want) {
  return (got.cpu() - want).abs().max().item().to_double();
}

}  // namespace kiln::testing
#endif  // KILN_TESTS_CUDA_DEVICE_COMPARE_H_
