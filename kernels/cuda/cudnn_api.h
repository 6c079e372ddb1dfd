#ifndef KILN_KERNELS_CUDA_CUDNN_API_H_
#define KILN_KERNELS_CUDA_CUDNN_API_H_
// cuDNN, loaded on first use instead of linked (as cuBLAS, cublas_api.h): its libraries are
// about 470 MB, a build may find the headers but a machine lack the library, and either way
// convolutions must still run (kernels/cuda/convolution.cu falls back to im2col + cuBLAS).
// Built only when CMake found cudnn.h (KILN_CUDNN=AUTO or ON defines KILN_WITH_CUDNN). Entry
// points are typed from the toolkit's headers, so a signature change fails to compile.
#ifdef KILN_WITH_CUDNN
#include <cudnn.h>

namespace kiln::cuda::detail {

struct CudnnApi {
  decltype(&cudnnGetVersion) get_version;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnCreate) create;
  decltype(&cudnnSetStream) set_stream;
  // the graph ("backend") API: plans built once per shape, then executed with a variant pack
  decltype(&cudnnBackendCreateDescriptor) backend_create;
  decltype(&cudnnBackendDestroyDescriptor) backend_destroy;
  decltype(&cudnnBackendSetAttribute) backend_set;
  decltype(&cudnnBackendGetAttribute) backend_get;
  decltype(&cudnnBackendFinalize) backend_finalize;
  decltype(&cudnnBackendExecute) backend_execute;
};

// The loaded API, or nullptr when libcudnn cannot be loaded (or lacks a symbol): callers fall
// back to kiln's own kernels. Loaded once per process.
const CudnnApi* cudnn_or_null();

// DeviceError "<op>: cuDNN error <string> in <what>" unless s is success.
void check_cudnn(cudnnStatus_t s, const char* op, const char* what);

}  // namespace kiln::cuda::detail

#define KILN_CUDNN_CHECK(api, expr, op) ::kiln::cuda::detail::check_cudnn((api).expr, (op), #expr)

#endif  // KILN_WITH_CUDNN
#endif  // KILN_KERNELS_CUDA_CUDNN_API_H_
