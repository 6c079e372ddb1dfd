// The one missing-kernel error (every backend table is constant-initialized: generated
// cpu_table.cpp and cuda_table.cpp).
#include "kiln/gen/backend_table.h"

namespace kiln {

void throw_missing_kernel(const char* op, Device device, Layout layout, const char* have) {
  if (layout == Layout::Strided)
    KILN_FAIL(NotImplementedError, op, "", "no ", device_type_name(device.type), " kernel (", device.str(),
              "); it has kernels for: ", have);
  KILN_FAIL(NotImplementedError, op, "layout", "no ", layout_name(layout), " kernel for ", device.str(),
            "; it has kernels for: ", have);
}

}  // namespace kiln
