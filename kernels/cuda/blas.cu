// mm, addmm and bmm on CUDA through cuBLAS: the product is planned as a GemmDesc
// (kiln/common/gemm_desc.h, host-tested against OpenBLAS) and run by
// cublasGemmStridedBatchedEx on the current stream. float16/bfloat16 accumulate in float32 on
// tensor cores; float32 uses TF32 tensor cores only when kiln::cuda::set_allow_tf32(true);
// complex64/complex128 are CUDA_C_32F/CUDA_C_64F products (no conjugation, as torch.mm).
#include <cuda_runtime.h>
#include <map>
#include "kiln/common/gemm_desc.h"
#include "gemm_into.h"
#include "kiln/gen/kernels/cuda/addmm.h"
#include "kiln/gen/kernels/cuda/bmm.h"
#include "kiln/gen/kernels/cuda/mm.h"
#include "cublas_api.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

// One handle per thread and device (cuBLAS handles are not meant to be shared across threads),
// bound to the current stream at every call.
cublasHandle_t handle_for(int device, const char* op) {
  thread_local std::map<int, cublasHandle_t> handles;
  auto it = handles.find(device);
  const detail::CublasApi& api = detail::cublas(op);
  if (it == handles.end()) {
    cublasHandle_t h = nullptr;
    KILN_CUBLAS_CHECK(api.create(&h), op, "");
    it = handles.emplace(device, h).first;
  }
  KILN_CUBLAS_CHECK(api.set_stream(it->second, detail::current_cuda_stream(device)), op, "");
  return it->second;
}

struct BlasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scalars;  // alpha/beta as double (64F compute) or float
};

BlasTypes blas_types(DType d, const char* op) {
  switch (d) {
    case DType::Float32:
      return {CUDA_R_32F, allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, false};
    case DType::Float64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case DType::Float16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case DType::BFloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    case DType::Complex64: return {CUDA_C_32F, CUBLAS_COMPUTE_32F, false};  // TF32 stays a real-only opt-in
    case DType::Complex128: return {CUDA_C_64F, CUBLAS_COMPUTE_64F, true};
    default: break;
  }
  KILN_FAIL(DTypeError, op, "self",
            "CUDA matrix products support float16, bfloat16, float32, float64, complex64 and complex128; got ",
            dtype_name(d));
}

// alpha and beta as cuBLAS reads them: {re, im} pairs, of which a real product reads only re.
template <typename R>
struct BlasScalars {
  R values[4];  // alpha.re, alpha.im, beta.re, beta.im
  const void* alpha() const { return &values[0]; }
  const void* beta() const { return &values[2]; }
};
template <typename R>
BlasScalars<R> blas_scalars(const Scalar& alpha, const Scalar& beta) {
  const complex<double> a = alpha.to<complex<double>>(), b = beta.to<complex<double>>();
  return {{R(a.re), R(a.im), R(b.re), R(b.im)}};
}

gemm::MatrixView view_of(const TensorBase& t) {
  const int64_t o = t.dim() - 2;
  return {t.size(o), t.size(o + 1), t.stride(o), t.stride(o + 1), t.dim() == 3 ? t.stride(0) : 0};
}

cublasOperation_t to_cublas(gemm::Trans t) { return t == gemm::Trans::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

template <typename T>
__global__ void scale_kernel(T* data, int64_t n, opmath_t<T> beta) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    data[i] = T(opmath_t<T>(data[i]) * beta);
}

// out *= beta, out dense (what an empty product leaves of beta * out + alpha * x @ y).
void scale_dense(const TensorBase& out, const Scalar& beta, int device, const char* op) {
  const int64_t n = out.numel();
  cudaStream_t stream = detail::current_cuda_stream(device);
  constexpr int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, int64_t(detail::sm_count(device)) * 8);
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<opmath_t<T>> || is_complex_v<T>)
      scale_kernel<T>
          <<<unsigned(blocks), threads, 0, stream>>>(static_cast<T*>(out.data_ptr()), n, beta.to<opmath_t<T>>());
  });
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

}  // namespace

// out ([r, c] or [batch, r, c], rows dense) = alpha * x @ y + beta * out (kernels/cuda/gemm_into.h).
void gemm_into(const TensorBase& out, TensorBase x, TensorBase y, const Scalar& alpha, const Scalar& beta,
               const char* op) {
  const int device = out.device().index;
  detail::check_device(device, op);
  KILN_CHECK(x.device() == out.device() && y.device() == out.device(), DeviceError, op, "mat2",
             "expected all tensors on ", out.device().str(), ", got ", x.device().str(), " and ", y.device().str());
  if (out.numel() == 0) return;
  const BlasTypes types = blas_types(out.dtype(), op);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  gemm::GemmPlan plan = gemm::plan_gemm(batch, view_of(x), view_of(y), view_of(out));
  if (plan.copy_x || plan.copy_y) {  // layouts BLAS cannot read: one dense copy, then plan again
    if (plan.copy_x) x = x.contiguous();
    if (plan.copy_y) y = y.contiguous();
    plan = gemm::plan_gemm(batch, view_of(x), view_of(y), view_of(out));
  }
  const gemm::GemmDesc& d = plan.desc;
  KILN_CHECK(gemm::fits_blas_int(d), NotImplementedError, op, "self",
             "cuBLAS takes sizes and leading dimensions below 2^31; got m=", d.m, " n=", d.n, " k=", d.k,
             " batch=", d.batch);
  DeviceGuard guard(device);
  if (d.k == 0) {  // an empty sum: out = beta * out, without asking cuBLAS about k = 0
    const complex<double> b = beta.to<complex<double>>();
    if (meta::is_zero(beta)) out.zero_();
    else if (b.re != 1.0 || b.im != 0.0) scale_dense(out, beta, device, op);
    return;
  }
  cublasHandle_t h = handle_for(device, op);
  const BlasScalars<double> scalars_d = blas_scalars<double>(alpha, beta);
  const BlasScalars<float> scalars_f = blas_scalars<float>(alpha, beta);
  const void* pa = types.double_scalars ? scalars_d.alpha() : scalars_f.alpha();
  const void* pb = types.double_scalars ? scalars_d.beta() : scalars_f.beta();
  KILN_CUBLAS_CHECK(detail::cublas(op).gemm_strided_batched_ex(
                        h, to_cublas(d.transa), to_cublas(d.transb), int(d.m), int(d.n), int(d.k), pa, y.data_ptr(),
                        types.data, int(d.lda), d.stride_a, x.data_ptr(), types.data, int(d.ldb), d.stride_b, pb,
                        out.data_ptr(), types.data, int(d.ldc), d.stride_c, int(d.batch), types.compute,
                        CUBLAS_GEMM_DEFAULT),
                    op, "self");
}

void mm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat2) {
  gemm_into(out, self, mat2, Scalar(1), Scalar(0), "mm");
}

void addmm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat1,
           const TensorBase& mat2, const Scalar& beta, const Scalar& alpha) {
  const bool zero_beta = meta::is_zero(beta);
  if (!zero_beta && out.numel() > 0) out.copy_(self);  // copy_ broadcasts; beta == 0 ignores self
  gemm_into(out, mat1, mat2, alpha, zero_beta ? Scalar(0) : beta, "addmm");
}

void bmm(const meta::MatmulPlan&, const TensorBase& out, const TensorBase& self, const TensorBase& mat2) {
  gemm_into(out, self, mat2, Scalar(1), Scalar(0), "bmm");
}

}  // namespace kiln::cuda
