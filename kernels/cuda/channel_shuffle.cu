// channel_shuffle on CUDA: one grid-stride thread per element, moving bytes so every dtype of
// one size shares a kernel. The meta step (kiln/meta/channel_shuffle.h) has checked the
// arguments.
#include <cuda_runtime.h>
#include <algorithm>
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/channel_shuffle.h"

namespace kiln::cuda {
namespace {

template <size_t N>
struct alignas(N) Bytes {
  unsigned char b[N];
};

constexpr int kThreads = 256;

// out element (row r, position s) reads self's row b * channels + j * per_group + i, where
// r = b * channels + i * groups + j
template <size_t N>
__global__ void channel_shuffle_kernel(Bytes<N>* out, const Bytes<N>* in, int64_t n, int64_t inner, int64_t groups,
                                       int64_t per_group) {
  const int64_t channels = groups * per_group;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = k / inner, s = k % inner;
    const int64_t b = r / channels, c = r % channels;
    const int64_t src = b * channels + (c % groups) * per_group + c / groups;
    out[k] = in[src * inner + s];
  }
}

template <size_t N>
void shuffle_bytes(const meta::ChannelShufflePlan& plan, const TensorBase& out, const TensorBase& self) {
  const int64_t n = out.numel();
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  detail::check_device(dev, "channel_shuffle");
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t(detail::sm_count(dev)) * 8);
  channel_shuffle_kernel<N><<<unsigned(std::max<int64_t>(blocks, 1)), kThreads, 0, detail::current_cuda_stream(dev)>>>(
      static_cast<Bytes<N>*>(out.data_ptr()), static_cast<const Bytes<N>*>(self.data_ptr()), n, plan.inner,
      plan.groups, plan.per_group);
  KILN_CUDA_CHECK(cudaGetLastError(), "channel_shuffle", "kernel launch");
}

}  // namespace

void channel_shuffle(const meta::ChannelShufflePlan& plan, const TensorBase& out, const TensorBase& self) {
  if (out.numel() == 0) return;
  switch (out.element_size()) {
    case 1:
      return shuffle_bytes<1>(plan, out, self);
    case 2:
      return shuffle_bytes<2>(plan, out, self);
    case 4:
      return shuffle_bytes<4>(plan, out, self);
    case 8:
      return shuffle_bytes<8>(plan, out, self);
    default:
      return shuffle_bytes<16>(plan, out, self);
  }
}

}  // namespace kiln::cuda
