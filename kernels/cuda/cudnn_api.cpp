// Loads libcudnn with dlopen on first use (see cudnn_api.h for why); kiln::cuda::cudnn_is_available.
#include "cudnn_api.h"

#include "kiln/cuda_device.h"

#ifdef KILN_WITH_CUDNN
#include <dlfcn.h>
#include <string>
#include "kiln/error.h"

#ifndef KILN_CUDNN_LIBRARY
#define KILN_CUDNN_LIBRARY "libcudnn.so.9"
#endif

namespace kiln::cuda::detail {
namespace {

struct Loaded {
  CudnnApi api{};
  bool ok = false;
};

template <typename Fn>
bool bind(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  // The library the build was configured with, else whatever the loader finds (a machine whose
  // cuDNN lives elsewhere, e.g. in a Python wheel, on LD_LIBRARY_PATH).
  void* lib = dlopen(KILN_CUDNN_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcudnn.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return l;
  CudnnApi& a = l.api;
  bool ok =
      bind(lib, "cudnnGetVersion", a.get_version) && bind(lib, "cudnnGetErrorString", a.error_string) &&
      bind(lib, "cudnnCreate", a.create) && bind(lib, "cudnnSetStream", a.set_stream) &&
      bind(lib, "cudnnBackendCreateDescriptor", a.backend_create) &&
      bind(lib, "cudnnBackendDestroyDescriptor", a.backend_destroy) &&
      bind(lib, "cudnnBackendSetAttribute", a.backend_set) && bind(lib, "cudnnBackendGetAttribute", a.backend_get) &&
      bind(lib, "cudnnBackendFinalize", a.backend_finalize) && bind(lib, "cudnnBackendExecute", a.backend_execute);
  // cuDNN 9's graph API; another major version may number its attributes otherwise.
  l.ok = ok && a.get_version() / 10000 == CUDNN_MAJOR;
  return l;
}

}  // namespace

const CudnnApi* cudnn_or_null() {
  static const Loaded loaded = load();  // thread-safe, once
  return loaded.ok ? &loaded.api : nullptr;
}

void check_cudnn(cudnnStatus_t s, const char* op, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  KILN_FAIL(DeviceError, op, "", "cuDNN error ", cudnn_or_null()->error_string(s), " in ", what);
}

}  // namespace kiln::cuda::detail

namespace kiln::cuda {
bool cudnn_is_available() { return detail::cudnn_or_null() != nullptr; }
int cudnn_version() {
  const detail::CudnnApi* a = detail::cudnn_or_null();
  return a ? int(a->get_version()) : 0;
}
}  // namespace kiln::cuda

#else  // built without cuDNN's headers

namespace kiln::cuda {
bool cudnn_is_available() { return false; }
int cudnn_version() { return 0; }
}  // namespace kiln::cuda

#endif  // KILN_WITH_CUDNN
