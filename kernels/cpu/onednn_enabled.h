#ifndef KILN_KERNELS_CPU_ONEDNN_ENABLED_H_
#define KILN_KERNELS_CPU_ONEDNN_ENABLED_H_
// The run-time switch for kiln's oneDNN paths (convolutions, onednn_conv.h; matrix products,
// onednn_gemm.h): KILN_DISABLE_ONEDNN=1 in the environment sends them all to OpenBLAS, to compare
// the two or to test the fallback where oneDNN is installed. Read once per process.
#include <cstdlib>
#include <cstring>

namespace kiln::cpu::onednn {

inline bool enabled() {
  static const bool on = [] {
    const char* v = std::getenv("KILN_DISABLE_ONEDNN");
    return !v || !*v || std::strcmp(v, "0") == 0;
  }();
  return on;
}

}  // namespace kiln::cpu::onednn
#endif  // KILN_KERNELS_CPU_ONEDNN_ENABLED_H_
