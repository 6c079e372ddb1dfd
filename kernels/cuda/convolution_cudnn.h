#ifndef KILN_KERNELS_CUDA_CONVOLUTION_CUDNN_H_
#define KILN_KERNELS_CUDA_CONVOLUTION_CUDNN_H_
// The convolution kernels' cuDNN path (convolution_cudnn.cpp). Each returns false, having written
// nothing, when cuDNN is not built in, does not load, is disabled (kiln::cuda::set_cudnn_enabled)
// or cannot take the case (a strided operand, a size past int32, no algorithm within the
// workspace limit): convolution.cu then runs its own im2col + cuBLAS kernels.
#include "kiln/meta/convolution.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {

// out = convolution (or its transpose) of input by weight, bias not added.
bool cudnn_convolution(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& input,
                       const TensorBase& weight);
// grad_weight = the weight's gradient given grad_output (overwritten).
bool cudnn_convolution_backward_weight(const meta::ConvPlan& plan, const TensorBase& grad_weight,
                                       const TensorBase& grad_output, const TensorBase& input);

}  // namespace kiln::cuda::detail

#endif  // KILN_KERNELS_CUDA_CONVOLUTION_CUDNN_H_
