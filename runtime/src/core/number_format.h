#ifndef KILN_RUNTIME_SRC_CORE_NUMBER_FORMAT_H_
#define KILN_RUNTIME_SRC_CORE_NUMBER_FORMAT_H_
// Python's repr() of numbers, so Scalar::str and Value::str read like the Python values they mirror.
#include <string>
#include "kiln/complex.h"

namespace kiln::detail {

std::string python_float_repr(double v);             // 1.0, 0.1, 1e-05, 1e+16, inf, nan
std::string python_complex_repr(complex<double> c);  // (1+2j), 1j, (-0-1.5j)

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_NUMBER_FORMAT_H_
