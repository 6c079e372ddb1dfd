#ifndef KILN_KERNELS_CUDA_FLASH_ATTENTION_H_
#define KILN_KERNELS_CUDA_FLASH_ATTENTION_H_
// Flash-attention kernels for float16 and bfloat16 on tensor cores (flash_attention.cu), under
// attention.cu's entry points; attention.cu keeps the float32/float64 path and the fallback.
#include <cuda_runtime.h>
#include "attention_args.cuh"

namespace kiln::cuda::flash {

// Whether the tensor-core forward (backward) takes this plan on `device`: a 16-bit dtype, head
// sizes E and Ev from 1 to 128, and tiles that fit the device's shared memory
// (kiln/common/flash_attention_tiles.h).
bool forward_fits(const meta::AttentionPlan& plan, int device);
bool backward_fits(const meta::AttentionPlan& plan, int device);

// q, k, v (and out, dout, o) dense [B, n, width]; lse and delta float32 [B, L]; mask as the
// plan reads it, its per-batch offsets on the device.
void forward(const meta::AttentionPlan& plan, const attention_args::Args& a, const TensorBase& q, const TensorBase& k,
             const TensorBase& v, const TensorBase& out, const TensorBase& lse, const void* mask,
             const int64_t* mask_offsets, cudaStream_t stream, const char* op);
void backward(const meta::AttentionPlan& plan, const attention_args::Args& a, const TensorBase& q, const TensorBase& k,
              const TensorBase& v, const TensorBase& dout, const TensorBase& lse, const TensorBase& delta,
              const TensorBase& dq, const TensorBase& dk, const TensorBase& dv, const void* mask,
              const int64_t* mask_offsets, cudaStream_t stream, const char* op);

}  // namespace kiln::cuda::flash
#endif  // KILN_KERNELS_CUDA_FLASH_ATTENTION_H_
