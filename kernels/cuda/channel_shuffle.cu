// channel_shuffle on CUDA: one grid-stride thread per element, moving bytes so every dtype of
// one size shares a kernel (kiln/common/element_bytes.h). The meta step
// (kiln/meta/channel_shuffle.h) has checked the arguments.
#include <cuda_runtime.h>
#include <algorithm>
#include "kiln/common/element_bytes.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/channel_shuffle.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;

// out element (row r, position s) reads self's row b * channels + j * per_group + i, where
// r = b * channels + i * groups + j
template <typename E>
__global__ void channel_shuffle_kernel(E* out, const E* in, int64_t n, int64_t inner, int64_t groups,
                                       int64_t per_group) {
  const int64_t channels = groups * per_group;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = k / inner, s = k % inner;
    const int64_t b = r / channels, c = r % channels;
    const int64_t src = b * channels + (c % groups) * per_group + c / groups;
    out[k] = in[src * inner + s];
  }
}

}  // namespace

void channel_shuffle(const meta::ChannelShufflePlan& plan, const TensorBase& out, const TensorBase& self) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  detail::check_device(dev, "channel_shuffle");
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(detail::sm_count(dev)) * 8);
  bytes::visit_element_size(out.element_size(), [&](auto tag) {
    using E = decltype(tag);
    channel_shuffle_kernel<E><<<unsigned(std::max<int64_t>(blocks, 1)), kThreads, 0, detail::current_cuda_stream(dev)>>>(
        static_cast<E*>(out.data_ptr()), static_cast<const E*>(self.data_ptr()), n, plan.inner, plan.groups,
        plan.per_group);
  });
  KILN_CUDA_CHECK(cudaGetLastError(), "channel_shuffle", "kernel launch");
}

}  // namespace kiln::cuda
