// The one missing-kernel error (each op's kernel table is constant-initialized in its generated
// entry, generated/src/ops/<op>.cpp; out-of-tree backends add theirs at run time).
#include <string>
#include "kiln/backend_registry.h"
#include "kiln/dispatch.h"
#include "kiln/error.h"

namespace kiln {

void throw_missing_kernel(const char* op, Device device, Layout layout,
                          const bool (&have)[kNumDeviceTypes][kNumLayouts]) {
  std::string list;
  for (int d = 0; d < kNumDeviceTypes; ++d)
    for (int l = 0; l < kNumLayouts; ++l)
      if (have[d][l])
        list += std::string(list.empty() ? "" : ", ") + (l ? std::string(layout_name(Layout(l))) + " " : "") +
                device_type_name(DeviceType(d));
  for (const std::string& key : registered_kernel_keys(op)) list += (list.empty() ? "" : ", ") + key;
  if (list.empty()) list = "none";
  if (layout == Layout::Strided)
    KILN_FAIL(NotImplementedError, op, "", "no ", device_type_name(device.type), " kernel (", device.str(),
              "); it has kernels for: ", list);
  KILN_FAIL(NotImplementedError, op, "layout", "no ", layout_name(layout), " kernel for ", device.str(),
            "; it has kernels for: ", list);
}

}  // namespace kiln
