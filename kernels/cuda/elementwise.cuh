#ifndef KILN_KERNELS_CUDA_ELEMENTWISE_CUH_
#define KILN_KERNELS_CUDA_ELEMENTWISE_CUH_
// The one generic elementwise launcher every generated CUDA pointwise kernel uses, with the
// same functor as the CPU loop. Dense operands aligned to 4 elements take 128-bit-or-less
// vector loads; everything else (broadcast, strided, transposed, unaligned) goes through the
// offset calculator, with 32-bit index math whenever every offset fits. Grid-stride loops, a
// grid sized by plan/launch.h, launched on the call's stream. It sees ElementwiseArgs, not
// Tensors: no tensor.h in the generated kernel files.
#include <cuda_runtime.h>
#include <utility>
#include "elementwise_args.h"
#include "plan/launch.h"
#include "plan/offset_calculator.h"
#include "kiln/cuda/check.h"

namespace kiln::cuda {

template <typename T, int W>
struct alignas(sizeof(T) * W) AlignedVector {
  T val[W];
};

namespace elementwise_detail {

template <int W, typename Out, typename F, typename... V>
__device__ __forceinline__ void apply_vector(const F& f, Out* out, const V&... in) {
  AlignedVector<Out, W> r;
#pragma unroll
  for (int j = 0; j < W; ++j) r.val[j] = Out(f(in.val[j]...));
  *reinterpret_cast<AlignedVector<Out, W>*>(out) = r;
}

// Dense, same-order operands whose addresses are all aligned to W elements.
template <int W, typename Out, typename F, typename... In>
__global__ void vectorized_kernel(int64_t n, F f, Out* out, const In*... in) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t vectors = n / W;
  for (int64_t v = first; v < vectors; v += stride)
    apply_vector<W>(f, out + v * W, reinterpret_cast<const AlignedVector<In, W>*>(in)[v]...);
  for (int64_t i = vectors * W + first; i < n; i += stride) out[i] = Out(f(in[i]...));
}

template <int N>
struct BasePointers {
  char* p[N];
};

template <typename Out, typename... In, typename F, int N, typename Offs, size_t... I>
__device__ __forceinline__ void apply_strided(const F& f, const BasePointers<N>& base, const Offs& o,
                                              std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(base.p[0] + o.bytes[0]) =
      Out(f(*reinterpret_cast<const In*>(base.p[I + 1] + o.bytes[I + 1])...));
}

template <typename Index, int N, typename F, typename Out, typename... In>
__global__ void strided_kernel(Index n, cuda_plan::OffsetCalculator<N, Index> oc, BasePointers<N> base, F f) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    apply_strided<Out, In...>(f, base, oc.get(i), std::index_sequence_for<In...>{});
}

template <typename Index, int N, typename Out, typename... In, typename F>
void launch_strided(const StridedGeometry& g, const F& f, int sms, cudaStream_t stream) {
  auto oc = cuda_plan::make_offset_calculator<N, Index>(g.ndim, g.sizes, g.strides);
  BasePointers<N> base;
  for (int k = 0; k < N; ++k) base.p[k] = g.base[k];
  cuda_plan::LaunchShape s = cuda_plan::elementwise_launch_shape(g.numel, 1, sms);
  strided_kernel<Index, N, F, Out, In...><<<unsigned(s.blocks), s.threads, 0, stream>>>(Index(g.numel), oc, base, f);
}

template <int W, typename Out, typename... In, typename F, size_t... I>
void launch_vectorized(const StridedGeometry& g, const F& f, int sms, cudaStream_t stream, std::index_sequence<I...>) {
  cuda_plan::LaunchShape s = cuda_plan::elementwise_launch_shape(g.numel, W, sms);
  vectorized_kernel<W><<<unsigned(s.blocks), s.threads, 0, stream>>>(
      g.numel, f, reinterpret_cast<Out*>(g.base[0]), reinterpret_cast<const In*>(g.base[I + 1])...);
}

}  // namespace elementwise_detail

// Runs out[i] = Out(f(in_0[i], ...)) over a prepared call (inputs already broadcast to the
// output's shape and cast to their compute types), on the device ElementwiseLaunch made current.
template <typename Out, typename... In, typename F>
void launch_elementwise(const ElementwiseArgs& args, const F& f) {
  using namespace elementwise_detail;
  constexpr int N = 1 + int(sizeof...(In));
  const StridedGeometry& g = args.geometry;
  if (g.numel == 0) return;
  const void* ptrs[N];
  const int sizes[N] = {int(sizeof(Out)), int(sizeof(In))...};
  for (int k = 0; k < N; ++k) ptrs[k] = g.base[k];
  if (g.contiguous && cuda_plan::vector_width(ptrs, sizes, N) == 4) {
    launch_vectorized<4, Out, In...>(g, f, args.sms, args.stream, std::index_sequence_for<In...>{});
  } else if (cuda_plan::fits_in_32bit_indexing(g.ndim, g.sizes, g.strides, N, g.numel)) {
    launch_strided<uint32_t, N, Out, In...>(g, f, args.sms, args.stream);
  } else {
    launch_strided<uint64_t, N, Out, In...>(g, f, args.sms, args.stream);
  }
  KILN_CUDA_CHECK(cudaGetLastError(), args.op, "kernel launch");
}

// The runner the generated per-op dispatch calls (the CPU passes its pointwise_loop instead).
struct ElementwiseRunner {
  template <typename Out, typename... In, typename F>
  void run(const ElementwiseArgs& args, const F& f) const {
    launch_elementwise<Out, In...>(args, f);
  }
};

}  // namespace kiln::cuda
#endif  // KILN_KERNELS_CUDA_ELEMENTWISE_CUH_
