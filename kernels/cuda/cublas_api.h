#ifndef KILN_KERNELS_CUDA_CUBLAS_API_H_
#define KILN_KERNELS_CUDA_CUBLAS_API_H_
// cuBLAS, loaded on first use instead of linked: libcublasLt is 540 MB, and mapping it costs
// every process linking kiln ~0.8 s at start (measured here), which CTest pays per test case.
// Entry points are typed from cublas_v2.h (cublas_api.cpp checks the one spelled out here), so a
// signature change in the toolkit fails to compile.
#include <cublas_v2.h>

namespace kiln::cuda::detail {

// The cublasComputeType_t overload (C++ also sees a legacy cudaDataType one).
using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                const void*, const void*, cudaDataType, int, long long, const void*,
                                                cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  GemmStridedBatchedEx gemm_strided_batched_ex;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

// The loaded API; DeviceError naming `op` when libcublas cannot be loaded.
const CublasApi& cublas(const char* op);

// DeviceError "<op>: <arg>: cuBLAS error <name> (<string>) in <what>" unless s is success.
void check_cublas(cublasStatus_t s, const char* op, const char* arg, const char* what);

}  // namespace kiln::cuda::detail

#define KILN_CUBLAS_CHECK(expr, op, arg) ::kiln::cuda::detail::check_cublas((expr), (op), (arg), #expr)

#endif  // KILN_KERNELS_CUDA_CUBLAS_API_H_
