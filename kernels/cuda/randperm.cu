// randperm on CUDA: the CPU's 64-bit Philox keys (random_detail::PermKeyBlock, drawn by the
// fill kernel of random.cu's kind), then cub's radix sort of (key, index) pairs. The sort is
// stable, so equal keys keep index order, which is the CPU's tie rule: a seed gives the same
// permutation on both devices.
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include "kiln/common/random_blocks.h"
#include "plan/launch.h"
#include "device_random.h"
#include "kiln/cuda/context.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda::detail {
namespace {

__global__ void perm_keys_kernel(uint64_t* keys, int64_t n, random_detail::BlockRange r) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < r.num_blocks; b += stride)
    random_detail::fill_block(keys, n, r, b, random_detail::PermKeyBlock{});
}

__global__ void iota_kernel(int64_t* index, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    index[i] = i;
}

}  // namespace

void randperm_fill(TensorBase& t, Generator& gen) {
  const char* op = "randperm";
  const int dev = t.device().index;
  check_device(dev, op);
  const int64_t n = t.numel();
  DeviceGuard guard(dev);
  const TensorOptions words(DType::Int64, t.device());  // uint64 keys live in int64 storage
  TensorBase keys = kiln::detail::empty_dense({n}, words), sorted_keys = kiln::detail::empty_dense({n}, words);
  TensorBase index = kiln::detail::empty_dense({n}, words), order = kiln::detail::empty_dense({n}, words);
  const random_detail::BlockRange r = random_detail::reserve_blocks(gen, n, random_detail::PermKeyBlock::kPerBlock);
  cudaStream_t stream = current_cuda_stream(dev);
  const cuda_plan::LaunchShape s = cuda_plan::elementwise_launch_shape(r.num_blocks, 1, sm_count(dev));
  auto* key_bits = static_cast<uint64_t*>(keys.data_ptr());
  perm_keys_kernel<<<unsigned(s.blocks), s.threads, 0, stream>>>(key_bits, n, r);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
  const cuda_plan::LaunchShape is = cuda_plan::elementwise_launch_shape(n, 1, sm_count(dev));
  iota_kernel<<<unsigned(is.blocks), is.threads, 0, stream>>>(static_cast<int64_t*>(index.data_ptr()), n);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");

  auto* sorted_bits = static_cast<uint64_t*>(sorted_keys.data_ptr());
  const auto* index_in = static_cast<const int64_t*>(index.data_ptr());
  auto* index_out = static_cast<int64_t*>(order.data_ptr());
  size_t temp_bytes = 0;
  KILN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_bits, sorted_bits, index_in, index_out, n,
                                                  0, 64, stream),
                  op, "radix sort");
  TensorBase temp =
      kiln::detail::empty_dense({int64_t(temp_bytes > 0 ? temp_bytes : 1)}, TensorOptions(DType::UInt8, t.device()));
  KILN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, key_bits, sorted_bits, index_in,
                                                  index_out, n, 0, 64, stream),
                  op, "radix sort");
  t.copy_(order);  // into t's dtype
}

}  // namespace kiln::cuda::detail
