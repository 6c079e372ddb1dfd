// flip, tril/triu and tril_indices/triu_indices on CUDA: one grid-stride thread per element
// (per row for the indices), moving bytes so every dtype of one size shares a kernel. The
// meta steps (kiln/meta/shape_build.h) have checked the arguments.
#include <cuda_runtime.h>
#include <algorithm>
#include "kiln/common/tri_indices.h"
#include "kiln/cuda/context.h"
#include "kiln/gen/kernels/cuda/flip.h"
#include "kiln/gen/kernels/cuda/tril.h"
#include "kiln/gen/kernels/cuda/tril_indices.h"
#include "kiln/gen/kernels/cuda/triu.h"
#include "kiln/gen/kernels/cuda/triu_indices.h"

namespace kiln::cuda {
namespace {

template <size_t N>
struct alignas(N) Bytes {
  unsigned char b[N];
};

// The merged flip geometry by value, so the kernel needs no device copy of the plan.
constexpr int kMaxFlipDims = 16;
struct FlipGeometry {
  int dims = 0;
  int64_t shape[kMaxFlipDims];
  bool flipped[kMaxFlipDims];
};

template <size_t N>
__global__ void flip_kernel(Bytes<N>* out, const Bytes<N>* in, int64_t n, FlipGeometry g) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, src = 0, stride = 1;
    for (int d = g.dims - 1; d >= 0; --d) {
      const int64_t s = g.shape[d], c = rest % s;
      rest /= s;
      src += (g.flipped[d] ? s - 1 - c : c) * stride;
      stride *= s;
    }
    out[i] = in[src];
  }
}

template <size_t N, bool Lower>
__global__ void triangle_kernel(Bytes<N>* out, const Bytes<N>* in, int64_t n, int64_t rows, int64_t cols,
                                int64_t diagonal) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    const bool keep = Lower ? j - r <= diagonal : j - r >= diagonal;
    out[i] = keep ? in[i] : Bytes<N>{};
  }
}

template <typename T, bool Lower>
__global__ void tri_indices_kernel(T* out, int64_t count, int64_t row, int64_t col, int64_t offset) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < row; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t k = Lower ? tri::tril_row_start(i, col, offset) : tri::triu_row_start(i, col, offset);
    const int64_t b = Lower ? 0 : tri::clamp(i + offset, 0, col);
    const int64_t e = Lower ? tri::tril_row_count(i, col, offset) : col;
    for (int64_t j = b; j < e; ++j, ++k) {
      out[k] = T(i);
      out[count + k] = T(j);
    }
  }
}

struct Launch {
  cudaStream_t stream;
  unsigned blocks;
  static constexpr int kThreads = 256;
};

Launch launch_for(const TensorBase& out, int64_t n, const char* op) {
  const int dev = out.device().index;
  detail::check_device(dev, op);
  const int64_t blocks =
      std::min<int64_t>((n + Launch::kThreads - 1) / Launch::kThreads, int64_t(detail::sm_count(dev)) * 8);
  return {detail::current_cuda_stream(dev), unsigned(std::max<int64_t>(blocks, 1))};
}

template <size_t N>
void flip_bytes(const FlipGeometry& g, const TensorBase& out, const TensorBase& self) {
  const int64_t n = out.numel();
  DeviceGuard guard(out.device().index);
  const Launch l = launch_for(out, n, "flip");
  flip_kernel<N><<<l.blocks, Launch::kThreads, 0, l.stream>>>(static_cast<Bytes<N>*>(out.data_ptr()),
                                                              static_cast<const Bytes<N>*>(self.data_ptr()), n, g);
  KILN_CUDA_CHECK(cudaGetLastError(), "flip", "kernel launch");
}

template <bool Lower, size_t N>
void triangle_bytes(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal,
                    const char* op) {
  const int64_t n = out.numel();
  DeviceGuard guard(out.device().index);
  const Launch l = launch_for(out, n, op);
  triangle_kernel<N, Lower><<<l.blocks, Launch::kThreads, 0, l.stream>>>(static_cast<Bytes<N>*>(out.data_ptr()),
                                                                         static_cast<const Bytes<N>*>(self.data_ptr()),
                                                                         n, plan.rows, plan.cols, diagonal);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

template <bool Lower>
void triangle(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal,
              const char* op) {
  if (out.numel() == 0) return;
  switch (out.element_size()) {
    case 1:
      return triangle_bytes<Lower, 1>(plan, out, self, diagonal, op);
    case 2:
      return triangle_bytes<Lower, 2>(plan, out, self, diagonal, op);
    case 4:
      return triangle_bytes<Lower, 4>(plan, out, self, diagonal, op);
    case 8:
      return triangle_bytes<Lower, 8>(plan, out, self, diagonal, op);
    default:
      return triangle_bytes<Lower, 16>(plan, out, self, diagonal, op);
  }
}

template <bool Lower>
void tri_indices(const meta::TriIndicesPlan& plan, const TensorBase& out, const char* op) {
  if (plan.row == 0 || plan.sizes[1] == 0) return;
  DeviceGuard guard(out.device().index);
  const Launch l = launch_for(out, plan.row, op);
  if (plan.dtype == DType::Int32)
    tri_indices_kernel<int32_t, Lower><<<l.blocks, Launch::kThreads, 0, l.stream>>>(
        static_cast<int32_t*>(out.data_ptr()), plan.sizes[1], plan.row, plan.col, plan.offset);
  else
    tri_indices_kernel<int64_t, Lower><<<l.blocks, Launch::kThreads, 0, l.stream>>>(
        static_cast<int64_t*>(out.data_ptr()), plan.sizes[1], plan.row, plan.col, plan.offset);
  KILN_CUDA_CHECK(cudaGetLastError(), op, "kernel launch");
}

}  // namespace

void flip(const meta::FlipPlan& plan, const TensorBase& out, const TensorBase& self, IntArrayRef /*dims*/) {
  if (out.numel() == 0) return;
  KILN_CHECK(plan.shape.size() <= size_t(kMaxFlipDims), NotImplementedError, "flip", "dims",
             "CUDA flip handles at most ", kMaxFlipDims, " alternating runs of flipped and kept dims");
  FlipGeometry g;
  g.dims = int(plan.shape.size());
  for (int d = 0; d < g.dims; ++d) {
    g.shape[d] = plan.shape[size_t(d)];
    g.flipped[d] = plan.flipped[size_t(d)];
  }
  if (g.dims == 0) {  // every dim has size 1: nothing moves
    g.dims = 1;
    g.shape[0] = out.numel();
    g.flipped[0] = false;
  }
  switch (out.element_size()) {
    case 1:
      return flip_bytes<1>(g, out, self);
    case 2:
      return flip_bytes<2>(g, out, self);
    case 4:
      return flip_bytes<4>(g, out, self);
    case 8:
      return flip_bytes<8>(g, out, self);
    default:
      return flip_bytes<16>(g, out, self);
  }
}

void tril(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal) {
  triangle<true>(plan, out, self, diagonal, "tril");
}

void triu(const meta::TrianglePlan& plan, const TensorBase& out, const TensorBase& self, int64_t diagonal) {
  triangle<false>(plan, out, self, diagonal, "triu");
}

void tril_indices(const meta::TriIndicesPlan& plan, const TensorBase& out) {
  tri_indices<true>(plan, out, "tril_indices");
}

void triu_indices(const meta::TriIndicesPlan& plan, const TensorBase& out) {
  tri_indices<false>(plan, out, "triu_indices");
}

}  // namespace kiln::cuda
