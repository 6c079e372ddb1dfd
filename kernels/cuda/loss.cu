// nll_loss on CUDA: a thread per (sample, position) picks -weight[target] * self[target] and the
// weight; reductions 1 (mean: divided by the total weight) and 2 (sum) then sum those on the
// device in float32 (float64 for float64 inputs). A target out of range makes the loss NaN and,
// outside a graph capture, raises IndexError naming it (one 16-byte read-back; a capture cannot
// wait, so there only the NaN tells).
#include <cuda_runtime.h>
#include <cmath>
#include "kiln/gen/kernels/cuda/nll_loss.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

template <typename T>
using loss_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// bad[0] = 1 and bad[1] = an offending target when one is out of range.
template <typename T, typename Acc>
__global__ void nll_loss_kernel(const T* x, const int64_t* target, const T* weight, int64_t count, int64_t C,
                                int64_t S, int64_t ignore_index, T* out_none, Acc* losses, Acc* weights,
                                int64_t* bad) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t n = i / S, s = i % S, cls = target[i];
    Acc loss = 0, w = 0;
    if (cls != ignore_index) {
      if (cls < 0 || cls >= C) {
        bad[1] = cls;
        bad[0] = 1;
        loss = Acc(NAN);
      } else {
        w = weight ? Acc(weight[cls]) : Acc(1);
        loss = -w * Acc(x[(n * C + cls) * S + s]);
      }
    }
    if (out_none) {
      out_none[i] = T(loss);
    } else {
      losses[i] = loss;
      weights[i] = w;
    }
  }
}

constexpr int kTotalThreads = 256;

// out (0-d) = sum(losses), or sum(losses) / sum(weights) for the mean (0 / 0 = NaN when every
// target is ignored, as PyTorch). One block in a fixed order, so the result is deterministic.
template <typename T, typename Acc>
__global__ void nll_loss_total_kernel(const Acc* losses, const Acc* weights, int64_t count, bool mean, T* out) {
  __shared__ Acc loss_sums[kTotalThreads], weight_sums[kTotalThreads];
  Acc l = 0, w = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) {
    l += losses[i];
    w += weights[i];
  }
  loss_sums[threadIdx.x] = l;
  weight_sums[threadIdx.x] = w;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      loss_sums[threadIdx.x] += loss_sums[threadIdx.x + half];
      weight_sums[threadIdx.x] += weight_sums[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = T(mean ? loss_sums[0] / weight_sums[0] : loss_sums[0]);
}

template <typename T>
void run(const meta::NllLossPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& target,
         const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  using Acc = loss_acc_t<T>;
  const Device device = self.device();
  const int dev = device.index;
  DeviceGuard guard(dev);
  cudaStream_t stream = detail::current_cuda_stream(dev);
  const TensorBase& x = self;  // contiguous, as the meta step's inputs are
  const TensorBase& t = target;
  const TensorBase& w = weight;
  const int64_t count = plan.N * plan.S;
  const DType acc_dtype = std::is_same_v<Acc, double> ? DType::Float64 : DType::Float32;
  TensorBase losses, weights;
  if (reduction != 0) {
    losses = kiln::detail::empty_dense({count}, TensorOptions(acc_dtype, device));
    weights = kiln::detail::empty_dense({count}, TensorOptions(acc_dtype, device));
  }
  TensorBase bad = kiln::detail::empty_dense({2}, TensorOptions(DType::Int64, device));
  KILN_CUDA_CHECK(cudaMemsetAsync(bad.data_ptr(), 0, 2 * sizeof(int64_t), stream), "nll_loss", "target");
  if (count > 0) {
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((count + threads - 1) / threads, int64_t(detail::sm_count(dev)) * 8);
    nll_loss_kernel<T, Acc><<<unsigned(blocks), threads, 0, stream>>>(
        static_cast<const T*>(x.data_ptr()), static_cast<const int64_t*>(t.data_ptr()),
        w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr, count, plan.C, plan.S, ignore_index,
        reduction == 0 ? static_cast<T*>(out.data_ptr()) : nullptr,
        losses.defined() ? static_cast<Acc*>(losses.data_ptr()) : nullptr,
        weights.defined() ? static_cast<Acc*>(weights.data_ptr()) : nullptr, static_cast<int64_t*>(bad.data_ptr()));
    KILN_CUDA_CHECK(cudaGetLastError(), "nll_loss", "kernel launch");
  }
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing), "nll_loss", "target");
  if (capturing == cudaStreamCaptureStatusNone && count > 0) {
    int64_t host_bad[2] = {0, 0};
    KILN_CUDA_CHECK(cudaMemcpyAsync(host_bad, bad.data_ptr(), sizeof(host_bad), cudaMemcpyDeviceToHost, stream),
                    "nll_loss", "target");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream), "nll_loss", "target");
    KILN_CHECK(host_bad[0] == 0, IndexError, "nll_loss", "target", "Target ", host_bad[1], " is out of bounds.");
  }
  if (reduction == 0) return;
  nll_loss_total_kernel<T, Acc><<<1, kTotalThreads, 0, stream>>>(static_cast<const Acc*>(losses.data_ptr()),
                                                                 static_cast<const Acc*>(weights.data_ptr()), count,
                                                                 reduction == 1, static_cast<T*>(out.data_ptr()));
  KILN_CUDA_CHECK(cudaGetLastError(), "nll_loss", "kernel launch");
}

}  // namespace

void nll_loss(const meta::NllLossPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& target,
              const TensorBase& weight, int64_t reduction, int64_t ignore_index) {
  detail::check_device(self.device().index, "nll_loss");  // (the dispatcher checked every tensor is on it)
  switch (self.dtype()) {
    case DType::Float16: return run<Half>(plan, out, self, target, weight, reduction, ignore_index);
    case DType::BFloat16: return run<BFloat16>(plan, out, self, target, weight, reduction, ignore_index);
    case DType::Float32: return run<float>(plan, out, self, target, weight, reduction, ignore_index);
    default: return run<double>(plan, out, self, target, weight, reduction, ignore_index);  // float64 (meta-checked)
  }
}

}  // namespace kiln::cuda
