// Backend tables: CPU's is constant (generated cpu_table.cpp); others register at load time.
#include "kiln/gen/backend_table.h"

namespace kiln {

void register_backend_table(DeviceType t, const BackendTable* table) { g_backend_tables[int(t)] = table; }

void throw_missing_kernel(const char* op, Device device, const char* have) {
  KILN_FAIL(NotImplementedError, op, "", "no ", device_type_name(device.type), " kernel (", device.str(),
            "); it has kernels for: ", have);
}

}  // namespace kiln
