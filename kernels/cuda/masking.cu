// nonzero, masked_select and masked_scatter on CUDA, on cub's stream compaction and scan:
// nonzero selects the flat positions of the nonzero elements (then unravels them into
// coordinates), masked_select selects the elements whose mask byte is set, masked_scatter
// numbers mask's true places with an inclusive scan and reads source at those numbers. The
// counts are checked against what the composites (or source's length) promise after an 8-byte
// read-back, before anything is written to the result.
#include <cuda_runtime.h>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <optional>
#include <type_traits>
#include "kiln/common/convert.h"
#include "kiln/common/element_bytes.h"
#include "kiln/cuda/context.h"
#include "for_each.cuh"
#include "plan/unravel.h"
#include "kiln/gen/kernels/cuda/masked_scatter.h"
#include "kiln/gen/kernels/cuda/masked_select_sized.h"
#include "kiln/gen/kernels/cuda/nonzero_sized.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

constexpr int kMaxDims = 16;

template <typename T>
__device__ bool truthy(T x) {
  if constexpr (is_complex_v<T>) return x.re != 0 || x.im != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return kiln::detail::convert<float>(x) != 0.f;
  else return x != T(0);
}

template <typename T>
struct NonzeroAt {
  const T* x;
  __device__ bool operator()(int64_t i) const { return truthy(x[i]); }
};

// Sizes of a result and the element strides of its operands over it (0 where they broadcast).
struct Shape {
  int nd = 0;
  int64_t sizes[kMaxDims];
  int64_t a[kMaxDims];  // nonzero: unused; masked_scatter: self's strides
  int64_t b[kMaxDims];  // masked_scatter: mask's strides
};

struct MaskAt {
  const uint8_t* m;
  Shape g;
  bool dense;
  __device__ int64_t offset(int64_t i, const int64_t* strides) const {
    return cuda_plan::unravel_offset(i, g.nd, g.sizes, strides);
  }
  __device__ int64_t operator()(int64_t i) const { return m[dense ? i : offset(i, g.b)] != 0; }
};

// nonzero: flat position r of the selection -> its row of coordinates.
struct UnravelFn {
  const int64_t* pos;
  int64_t* rows;
  Shape g;
  __device__ void operator()(int64_t r) const {
    cuda_plan::unravel_coordinates(pos[r], g.nd, g.sizes, rows + r * g.nd);
  }
};

// masked_scatter: a true place takes source's next element, the others keep self's.
template <typename E>
struct ScatterFn {
  MaskAt at;
  const int64_t* number;
  const E* x;
  const E* src;
  E* o;
  __device__ void operator()(int64_t i) const {
    o[i] = at(i) != 0 ? src[number[i] - 1] : x[at.dense ? i : at.offset(i, at.g.a)];
  }
};

class MaskStream {
 public:
  MaskStream(const TensorBase& like, const char* op) : op_(op), device_(like.device()) {
    detail::check_device(device_.index, op);
    guard_.emplace(device_.index);
    stream_ = detail::current_cuda_stream(device_.index);
  }
  cudaStream_t get() const { return stream_; }
  template <typename F>
  void run(int64_t n, const F& f) const {
    kiln::cuda::for_each(n, f, device_.index, stream_, op_);
  }
  TensorBase scratch(int64_t bytes) const {
    return kiln::detail::empty_dense({std::max<int64_t>(bytes, 1)}, TensorOptions(DType::UInt8, device_));
  }
  TensorBase int64s(int64_t n) const {
    return kiln::detail::empty_dense({std::max<int64_t>(n, 1)}, TensorOptions(DType::Int64, device_));
  }
  int64_t read(const int64_t* at) const {
    int64_t host = 0;
    KILN_CUDA_CHECK(cudaMemcpyAsync(&host, at, sizeof(host), cudaMemcpyDeviceToHost, stream_), op_, "count");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_), op_, "count");
    return host;
  }

 private:
  const char* op_;
  Device device_;
  std::optional<DeviceGuard> guard_;
  cudaStream_t stream_ = nullptr;
};

// cub's two-call protocol: ask for the scratch size, then run.
template <typename Call>
void with_scratch(const MaskStream& s, const char* op, const Call& call) {
  size_t bytes = 0;
  KILN_CUDA_CHECK(call(nullptr, bytes), op, "cub");
  TensorBase scratch = s.scratch(int64_t(bytes));
  KILN_CUDA_CHECK(call(scratch.data_ptr(), bytes), op, "cub");
}

Shape shape_of(IntArrayRef sizes, const char* op) {
  KILN_CHECK(int64_t(sizes.size()) <= kMaxDims, NotImplementedError, op, "self", "CUDA kernel takes at most ", kMaxDims,
             " dims, got ", sizes.size());
  Shape g;
  g.nd = int(sizes.size());
  for (int d = 0; d < g.nd; ++d) g.sizes[d] = sizes[size_t(d)];
  return g;
}

void check_found(const char* op, int64_t found, int64_t count) {
  KILN_CHECK(found == count, ValueError, op, "count", "expected ", count, " true places, found ", found);
}

}  // namespace

void nonzero_sized(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self, int64_t count) {
  const char* op = "_nonzero_sized";
  const MaskStream s(self, op);
  const int64_t n = self.numel();
  const Shape g = shape_of(self.sizes(), op);
  TensorBase positions = s.int64s(count + 1);  // the last slot: how many cub found
  int64_t* pos = static_cast<int64_t*>(positions.data_ptr());
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const NonzeroAt<T> pred{static_cast<const T*>(self.data_ptr())};
    thrust::counting_iterator<int64_t> places(0);
    // count + 1 slots: a wrong count cannot write past the buffer before it is caught
    with_scratch(s, op, [&](void* scratch, size_t& bytes) {
      return cub::DeviceSelect::If(scratch, bytes, places, pos, pos + count, n, pred, s.get());
    });
  });
  check_found(op, s.read(pos + count), count);
  if (g.nd == 0) return;
  int64_t* rows = static_cast<int64_t*>(out.data_ptr());
  s.run(count, UnravelFn{pos, rows, g});
  (void)plan;
}

void masked_select_sized(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self,
                         const TensorBase& mask, int64_t count) {
  const char* op = "_masked_select_sized";
  const MaskStream s(self, op);
  const int64_t n = self.numel();
  TensorBase found = s.int64s(1);
  int64_t* found_at = static_cast<int64_t*>(found.data_ptr());
  // selected into a scratch vector of n (count may be wrong only if the caller lied; the result
  // holds count), then the first count copied out
  bytes::visit_element_size(self.element_size(), [&](auto tag) {
    using E = decltype(tag);
    TensorBase picked = s.scratch(int64_t(sizeof(E)) * std::max<int64_t>(n, 1));
    E* p = static_cast<E*>(picked.data_ptr());
    with_scratch(s, op, [&](void* scratch, size_t& bytes) {
      return cub::DeviceSelect::Flagged(scratch, bytes, static_cast<const E*>(self.data_ptr()),
                                        static_cast<const uint8_t*>(mask.data_ptr()), p, found_at, n, s.get());
    });
    check_found(op, s.read(found_at), count);
    if (count > 0)
      KILN_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(), p, size_t(count) * sizeof(E), cudaMemcpyDeviceToDevice, s.get()),
                      op, "copy");
  });
  (void)plan;
}

void masked_scatter(const meta::MaskPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& mask,
                    const TensorBase& source) {
  const char* op = "masked_scatter";
  const MaskStream s(self, op);
  const int64_t n = out.numel(), available = source.numel();
  if (n == 0) return;
  Shape g = shape_of(plan.sizes, op);
  if (!plan.dense)
    for (int d = 0; d < g.nd; ++d) {
      g.a[d] = plan.self_strides[size_t(d)];
      g.b[d] = plan.mask_strides[size_t(d)];
    }
  const MaskAt at{static_cast<const uint8_t*>(mask.data_ptr()), g, plan.dense};
  // number[i]: the true places up to and including i; a true place i reads source[number[i] - 1]
  TensorBase numbers = s.int64s(n);
  int64_t* number = static_cast<int64_t*>(numbers.data_ptr());
  auto flags = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), at);
  with_scratch(s, op, [&](void* scratch, size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(scratch, bytes, flags, number, n, s.get());
  });
  const int64_t needed = s.read(number + n - 1);
  KILN_CHECK(needed <= available, ShapeError, op, "source", "expected source to hold at least ", needed,
             " elements (the true places of mask), got ", available);
  bytes::visit_element_size(self.element_size(), [&](auto tag) {
    using E = decltype(tag);
    const E* x = static_cast<const E*>(self.data_ptr());
    const E* src = static_cast<const E*>(source.data_ptr());
    E* o = static_cast<E*>(out.data_ptr());
    s.run(n, ScatterFn<E>{at, number, x, src, o});
  });
}

}  // namespace kiln::cuda
