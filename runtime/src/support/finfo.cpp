// Limits of the floating dtypes, as torch.finfo reports them.
#include <limits>
#include "kiln/dtype.h"
#include "kiln/error.h"

namespace kiln {

FInfo finfo(DType t) {
  switch (t) {
    case DType::Float16: return {65504.0, -65504.0, 0.0009765625, 6.103515625e-05};
    case DType::BFloat16: return {3.3895313892515355e+38, -3.3895313892515355e+38, 0.0078125, 1.1754943508222875e-38};
    case DType::Float32:
    case DType::Complex64:
      return {std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
              std::numeric_limits<float>::epsilon(), std::numeric_limits<float>::min()};
    case DType::Float64:
    case DType::Complex128:
      return {std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
              std::numeric_limits<double>::epsilon(), std::numeric_limits<double>::min()};
    default:
      KILN_FAIL(DTypeError, "finfo", "dtype", "expected a floating or complex dtype, got ", dtype_name(t));
  }
}

}  // namespace kiln
