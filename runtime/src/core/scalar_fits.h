#ifndef KILN_RUNTIME_SRC_CORE_SCALAR_FITS_H_
#define KILN_RUNTIME_SRC_CORE_SCALAR_FITS_H_
// Whether a Scalar converts to a dtype without overflow (c10's checked_convert), as
// fill_/full require: torch.full((1,), 300, dtype=torch.uint8) is an error.
#include "kiln/scalar.h"

namespace kiln::detail {

bool scalar_fits(const Scalar& v, DType dtype);

}  // namespace kiln::detail
#endif  // KILN_RUNTIME_SRC_CORE_SCALAR_FITS_H_
