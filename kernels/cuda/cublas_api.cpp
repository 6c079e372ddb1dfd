// Loads libcublas with dlopen on the first cuBLAS call (see cublas_api.h for why).
#include "cublas_api.h"

#include <dlfcn.h>
#include <mutex>
#include <string>
#include "kiln/error.h"

#ifndef KILN_CUBLAS_LIBRARY
#define KILN_CUBLAS_LIBRARY "libcublas.so"
#endif

namespace kiln::cuda::detail {
namespace {

// Fails to compile if no declaration in the toolkit matches the pointer type we load
// (unevaluated: no link-time reference to libcublas).
static_assert(sizeof(static_cast<GemmStridedBatchedEx>(&cublasGemmStridedBatchedEx)) == sizeof(void*));

struct Loaded {
  CublasApi api{};
  std::string error;  // empty when loaded
};

template <typename Fn>
bool bind(void* lib, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && error.empty()) error = std::string("symbol ") + name + " not found in " + KILN_CUBLAS_LIBRARY;
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  // The toolkit's library the build was configured with, else whatever the loader finds.
  void* lib = dlopen(KILN_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    l.error = std::string("cannot load cuBLAS (") + KILN_CUBLAS_LIBRARY + "): " + (why ? why : "unknown error");
    return l;
  }
  CublasApi& a = l.api;
  std::string& e = l.error;
  bind(lib, "cublasCreate_v2", a.create, e);
  bind(lib, "cublasDestroy_v2", a.destroy, e);
  bind(lib, "cublasSetStream_v2", a.set_stream, e);
  bind(lib, "cublasSetMathMode", a.set_math_mode, e);
  bind(lib, "cublasSetWorkspace_v2", a.set_workspace, e);
  bind(lib, "cublasGemmStridedBatchedEx", a.gemm_strided_batched_ex, e);
  bind(lib, "cublasGetStatusName", a.status_name, e);
  bind(lib, "cublasGetStatusString", a.status_string, e);
  return l;
}

}  // namespace

const CublasApi& cublas(const char* op) {
  static const Loaded loaded = load();  // thread-safe, once
  if (!loaded.error.empty()) KILN_FAIL(DeviceError, op, "", loaded.error);
  return loaded.api;
}

void check_cublas(cublasStatus_t s, const char* op, const char* arg, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const CublasApi& a = cublas(op);
  KILN_FAIL(DeviceError, op, arg, "cuBLAS error ", a.status_name(s), " (", a.status_string(s), ") in ", what);
}

}  // namespace kiln::cuda::detail
