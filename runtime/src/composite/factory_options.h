#ifndef KILN_RUNTIME_SRC_COMPOSITE_FACTORY_OPTIONS_H_
#define KILN_RUNTIME_SRC_COMPOSITE_FACTORY_OPTIONS_H_
// What a *_like factory's caller left out of its options comes from self (dtype and device).
#include "kiln/tensor.h"

namespace kiln::composite {

inline TensorOptions options_like(const Tensor& self, TensorOptions options) {
  if (!options.dtype_given) options.dtype = self.dtype();
  if (!options.device_given) options.device = self.device();
  return options;
}

}  // namespace kiln::composite
#endif  // KILN_RUNTIME_SRC_COMPOSITE_FACTORY_OPTIONS_H_
