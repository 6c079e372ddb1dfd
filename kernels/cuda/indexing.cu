// The indexing ops on CUDA (geometry in kiln/meta/indexing.h): gather, scatter, scatter_add,
// scatter_reduce, index_select, index_add, index_copy, index_fill, take, put.
//
// Index values: a thread that meets an index out of range does not follow it and records it;
// outside a graph capture the host reads the record back (one 16-byte copy and a stream sync)
// and raises IndexError naming it, as nll_loss and cummax's gradient do. The in-place variants
// compute into a temporary, so a failed call leaves self as it was.
//
// Determinism: reads and fills are one thread per element. Sums (scatter_add, scatter_reduce
// sum, index_add, put with accumulate) use atomics for float32, float64, int32 and int64 unless
// kiln::use_deterministic_algorithms(true); every other combination walks each destination's
// indices in order (one thread per line of places), which is deterministic and gives the
// CPU's result bit for bit, at the cost of parallelism along the indexed dim.
#include <cuda_runtime.h>
#include <algorithm>
#include <optional>
#include <type_traits>
#include "kiln/common/element_bytes.h"
#include "kiln/common/scatter_rules.h"
#include "kiln/cuda/context.h"
#include "for_each.cuh"
#include "kiln/determinism.h"
#include "kiln/gen/kernels/cuda/gather.h"
#include "kiln/gen/kernels/cuda/index_add.h"
#include "kiln/gen/kernels/cuda/index_copy.h"
#include "kiln/gen/kernels/cuda/index_fill.h"
#include "kiln/gen/kernels/cuda/index_fill_tensor.h"
#include "kiln/gen/kernels/cuda/index_select.h"
#include "kiln/gen/kernels/cuda/put.h"
#include "kiln/gen/kernels/cuda/scatter.h"
#include "kiln/gen/kernels/cuda/scatter_add.h"
#include "kiln/gen/kernels/cuda/scatter_reduce.h"
#include "kiln/gen/kernels/cuda/scatter_value_with_reduce.h"
#include "kiln/gen/kernels/cuda/scatter_with_reduce.h"
#include "kiln/gen/kernels/cuda/scatter_value.h"
#include "kiln/tensor_base.h"

namespace kiln::cuda {
namespace {

using meta::ScatterReduce;
constexpr int kMaxDims = 16;

// ---------------------------------------------------------------- launching and index checks
// Where threads record an index out of range: [flag, value].
struct BadIndex {
  int64_t* at;
  __device__ bool ok(int64_t k, int64_t lo, int64_t size) const {
    if (k >= lo && k < size) return true;
    at[1] = k;
    at[0] = 1;
    return false;
  }
};

class Launch {
 public:
  Launch(const TensorBase& like, const char* op) : op_(op), device_(like.device()) {
    detail::check_device(device_.index, op);
    guard_.emplace(device_.index);
    stream_ = detail::current_cuda_stream(device_.index);
    bad_ = kiln::detail::empty_dense({2}, TensorOptions(DType::Int64, device_));
    KILN_CUDA_CHECK(cudaMemsetAsync(bad_.data_ptr(), 0, 2 * sizeof(int64_t), stream_), op, "index");
  }
  BadIndex bad() const { return {static_cast<int64_t*>(bad_.data_ptr())}; }

  template <typename F>
  void run(int64_t n, const F& f) const {
    kiln::cuda::for_each(n, f, device_.index, stream_, op_);
  }

  // Raises IndexError for a recorded index (not inside a graph capture, which cannot sync).
  void check(int64_t dim, int64_t size) const {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    KILN_CUDA_CHECK(cudaStreamIsCapturing(stream_, &capturing), op_, "index");
    if (capturing != cudaStreamCaptureStatusNone) return;
    int64_t host[2] = {0, 0};
    KILN_CUDA_CHECK(cudaMemcpyAsync(host, bad_.data_ptr(), sizeof(host), cudaMemcpyDeviceToHost, stream_), op_,
                    "index");
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream_), op_, "index");
    KILN_CHECK(host[0] == 0, IndexError, op_, "index", "index ", host[1], " is out of bounds for dimension ", dim,
               " with size ", size);
  }

 private:
  const char* op_;
  Device device_;
  std::optional<DeviceGuard> guard_;
  cudaStream_t stream_ = nullptr;
  TensorBase bad_;
};

template <typename T>
inline constexpr bool kAtomicSum =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

template <typename T>
__device__ void atomic_add(T* at, T v) {
  if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(at), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(at, v);
  }
}

// ---------------------------------------------------------------- gather / scatter geometry
// index's shape (0-d as [1]) with contiguous strides of index, of the indexed tensor (self for
// gather, out for scatter) and of the other one (src).
struct Geometry {
  int ndim = 1, dim = 0;
  int64_t size[kMaxDims], index_stride[kMaxDims], indexed_stride[kMaxDims], other_stride[kMaxDims];
  int64_t dim_size = 1;  // of the indexed tensor: index values must lie in [0, dim_size)

  // Offsets of index element e in the indexed tensor (dim's coordinate left out) and the other.
  __device__ void offsets(int64_t e, int64_t& indexed, int64_t& other) const {
    indexed = other = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = e % size[d];
      e /= size[d];
      if (d != dim) indexed += c * indexed_stride[d];
      other += c * other_stride[d];
    }
  }
  // Lines of places: index's elements with the coordinate at dim left out, e its first element.
  __device__ int64_t line_start(int64_t line) const {
    int64_t e = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      if (d == dim) continue;
      e += (line % size[d]) * index_stride[d];
      line /= size[d];
    }
    return e;
  }
};

void strides_of(IntArrayRef sizes, int ndim, int64_t* out) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    out[d] = s;
    s *= sizes.size() ? sizes[size_t(d)] : 1;
  }
}

Geometry geometry(const TensorBase& index, const TensorBase& indexed, IntArrayRef other_sizes, int64_t dim,
                  const char* op) {
  Geometry g;
  g.ndim = int(std::max<int64_t>(1, index.dim()));
  KILN_CHECK(g.ndim <= kMaxDims, NotImplementedError, op, "index", "CUDA takes at most ", kMaxDims, " dims, got ",
             g.ndim);
  g.dim = int(dim);
  for (int d = 0; d < g.ndim; ++d) g.size[d] = index.dim() ? index.size(d) : 1;
  strides_of(index.sizes(), g.ndim, g.index_stride);
  strides_of(indexed.sizes(), g.ndim, g.indexed_stride);
  strides_of(other_sizes, g.ndim, g.other_stride);
  g.dim_size = indexed.dim() ? indexed.size(dim) : 1;
  return g;
}

template <typename E>
struct GatherFn {
  Geometry g;
  const E* self;
  const int64_t* index;
  E* out;
  BadIndex bad;
  __device__ void operator()(int64_t e) const {
    int64_t at, unused;
    g.offsets(e, at, unused);
    const int64_t k = index[e];
    if (bad.ok(k, 0, g.dim_size)) out[e] = self[at + k * g.indexed_stride[g.dim]];
  }
};

// src (a tensor, or one value) as the scatter kernels read it.
template <typename T>
struct Source {
  const T* data;  // null: every element is `value`
  T value;
  __device__ T operator()(int64_t at) const { return data ? data[at] : value; }
};

// One thread per line of places, walking index along dim in order (deterministic).
template <typename T>
struct ScatterLineFn {
  Geometry g;
  const int64_t* index;
  Source<T> src;
  T* out;
  int64_t* count;  // mean: values met per place (null otherwise)
  ScatterReduce reduce;
  bool include_self;
  BadIndex bad;
  __device__ void operator()(int64_t line) const {
    using Rule = scatter::Rule<T>;
    const int64_t first = g.line_start(line);
    for (int pass = include_self || reduce == ScatterReduce::None ? 1 : 0; pass < 2; ++pass) {
      for (int64_t j = 0; j < g.size[g.dim]; ++j) {
        const int64_t e = first + j * g.index_stride[g.dim];
        int64_t at, from;
        g.offsets(e, at, from);
        const int64_t k = index[e];
        if (!bad.ok(k, 0, g.dim_size)) continue;
        T& place = out[at + k * g.indexed_stride[g.dim]];
        if (pass == 0) {  // without self: the places written start from the identity
          place = Rule::identity(reduce);
          continue;
        }
        place = reduce == ScatterReduce::None ? src(from) : Rule::apply(reduce, place, src(from));
        if (count) ++count[at + k * g.indexed_stride[g.dim]];
      }
    }
  }
};

template <typename T>
struct ScatterAtomicFn {
  Geometry g;
  const int64_t* index;
  const T* src;
  T* out;
  BadIndex bad;
  __device__ void operator()(int64_t e) const {
    int64_t at, from;
    g.offsets(e, at, from);
    const int64_t k = index[e];
    if (bad.ok(k, 0, g.dim_size)) atomic_add(&out[at + k * g.indexed_stride[g.dim]], src[from]);
  }
};

template <typename T>
struct MeanDivideFn {
  T* out;
  const int64_t* count;
  __device__ void operator()(int64_t i) const {
    if (count[i] > 1) out[i] = scatter::Rule<T>::divide(out[i], count[i]);
  }
};

template <typename T>
void scatter_typed(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                   const TensorBase& index, const TensorBase* src, T value, const char* op) {
  out.copy_(self);
  if (index.numel() == 0) return;
  const Launch launch(self, op);
  const Geometry g = geometry(index, self, src ? src->sizes() : index.sizes(), plan.dim, op);
  const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  const T* x = src ? static_cast<const T*>(src->data_ptr()) : nullptr;
  const bool atomics =
      plan.reduce == ScatterReduce::Sum && plan.include_self && x && !are_deterministic_algorithms_enabled();
  if constexpr (kAtomicSum<T>) {
    if (atomics) {
      launch.run(index.numel(), ScatterAtomicFn<T>{g, idx, x, y, launch.bad()});
      launch.check(plan.dim, g.dim_size);
      return;
    }
  }
  TensorBase count;
  if (plan.reduce == ScatterReduce::Mean) {
    count = kiln::detail::empty_dense(out.sizes(), TensorOptions(DType::Int64, out.device()));
    count.fill_(plan.include_self ? 1 : 0);
  }
  int64_t* counts = count.defined() ? static_cast<int64_t*>(count.data_ptr()) : nullptr;
  const int64_t lines = index.numel() / g.size[g.dim];
  launch.run(lines,
             ScatterLineFn<T>{g, idx, Source<T>{x, value}, y, counts, plan.reduce, plan.include_self, launch.bad()});
  if (counts) launch.run(out.numel(), MeanDivideFn<T>{y, counts});
  launch.check(plan.dim, g.dim_size);
}

void scatter_any(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                 const TensorBase& index, const TensorBase* src, const Scalar& value, const char* op) {
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    scatter_typed<T>(plan, out, self, index, src, value.to<T>(), op);
  });
}

// ---------------------------------------------------------------- index_* along a dim
struct IndexGeometry {
  int64_t outer, size, inner, n;
};
IndexGeometry index_geometry(const meta::IndexPlan& plan) {
  return {plan.split.outer, plan.split.size, plan.split.inner, plan.n};
}

template <typename E, typename I>
struct IndexSelectFn {
  IndexGeometry g;
  const E* self;
  const I* index;
  E* out;
  BadIndex bad;
  __device__ void operator()(int64_t k) const {
    const int64_t c = k % g.inner, i = (k / g.inner) % g.n, o = k / (g.inner * g.n);
    const int64_t at = int64_t(index[i]);
    if (bad.ok(at, 0, g.size)) out[k] = self[(o * g.size + at) * g.inner + c];
  }
};

// How index_add/index_copy/index_fill combine a source element into its place.
enum class Update { Add, Copy, Fill };

// One thread per source element (places may meet: atomics for Add, any order for Copy/Fill).
template <typename T, typename I, Update kUpdate>
struct IndexUpdateFn {
  IndexGeometry g;
  const I* index;
  const T* source;
  T value;  // alpha (Add) or the fill value
  T* out;
  bool wrap;
  BadIndex bad;
  __device__ void operator()(int64_t k) const {
    const int64_t c = k % g.inner, i = (k / g.inner) % g.n, o = k / (g.inner * g.n);
    int64_t at = int64_t(index[i]);
    if (!bad.ok(at, wrap ? -g.size : 0, g.size)) return;
    if (at < 0) at += g.size;
    T* place = &out[(o * g.size + at) * g.inner + c];
    if constexpr (kUpdate == Update::Add) {
      if constexpr (kAtomicSum<T>) atomic_add(place, T(value * source[k]));
    } else if constexpr (kUpdate == Update::Copy) {
      *place = source[k];
    } else {
      *place = value;
    }
  }
};

// One thread per column (o, c), walking the indices in order (deterministic).
template <typename T, typename I, Update kUpdate>
struct IndexWalkFn {
  IndexGeometry g;
  const I* index;
  const T* source;
  T value;
  T* out;
  BadIndex bad;
  __device__ void operator()(int64_t col) const {
    using M = opmath_t<T>;
    const int64_t c = col % g.inner, o = col / g.inner;
    for (int64_t i = 0; i < g.n; ++i) {
      const int64_t at = int64_t(index[i]);
      if (!bad.ok(at, 0, g.size)) continue;
      T& place = out[(o * g.size + at) * g.inner + c];
      const T x = source[(o * g.n + i) * g.inner + c];
      if constexpr (kUpdate == Update::Copy) {
        place = x;
      } else if constexpr (std::is_same_v<T, bool>) {
        place = place || (x && value);
      } else {
        place = T(M(place) + M(value) * M(x));
      }
    }
  }
};

template <typename F>
void visit_index(const TensorBase& index, const F& f) {
  if (index.dtype() == DType::Int32) f(int32_t{});
  else f(int64_t{});
}

template <Update kUpdate>
void index_update(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                  const TensorBase* source, const Scalar& value, bool wrap, const char* op) {
  out.copy_(self);
  const IndexGeometry g = index_geometry(plan);
  if (g.n == 0 || out.numel() == 0) return;
  const Launch launch(self, op);
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    visit_index(index, [&](auto itag) {
      using I = decltype(itag);
      const I* idx = static_cast<const I*>(index.data_ptr());
      const T* x = source ? static_cast<const T*>(source->data_ptr()) : nullptr;
      T* y = static_cast<T*>(out.data_ptr());
      const T v = value.to<T>();
      const bool walk = kUpdate != Update::Fill &&
                        (are_deterministic_algorithms_enabled() || (kUpdate == Update::Add && !kAtomicSum<T>));
      if (walk) {
        if constexpr (kUpdate != Update::Fill)
          launch.run(g.outer * g.inner, IndexWalkFn<T, I, kUpdate>{g, idx, x, v, y, launch.bad()});
      } else {
        launch.run(g.outer * g.n * g.inner, IndexUpdateFn<T, I, kUpdate>{g, idx, x, v, y, wrap, launch.bad()});
      }
    });
  });
  launch.check(plan.dim, g.size);
}

// ---------------------------------------------------------------- take / put over self flat
template <typename E>
struct TakeFn {
  const E* self;
  const int64_t* index;
  E* out;
  int64_t size;
  BadIndex bad;
  __device__ void operator()(int64_t i) const {
    const int64_t k = index[i];
    if (bad.ok(k, -size, size)) out[i] = self[k < 0 ? k + size : k];
  }
};

template <typename T>
struct PutFn {
  const int64_t* index;
  const T* source;
  T* out;
  int64_t size;
  bool accumulate;
  BadIndex bad;
  __device__ void operator()(int64_t i) const {
    const int64_t k = index[i];
    if (!bad.ok(k, -size, size)) return;
    T* place = &out[k < 0 ? k + size : k];
    if constexpr (kAtomicSum<T>) {
      if (accumulate) return atomic_add(place, source[i]);
    }
    *place = source[i];
  }
};

// One thread, every index in order: put's deterministic walk.
template <typename T>
struct PutWalkFn {
  const int64_t* index;
  const T* source;
  T* out;
  int64_t size, n;
  bool accumulate;
  BadIndex bad;
  __device__ void operator()(int64_t) const {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = index[i];
      if (!bad.ok(k, -size, size)) continue;
      T& place = out[k < 0 ? k + size : k];
      place = accumulate ? scatter::Rule<T>::apply(ScatterReduce::Sum, place, source[i]) : source[i];
    }
  }
};

using bytes::visit_element_size;

}  // namespace

void gather(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
            int64_t /*dim*/, bool /*sparse_grad*/) {
  if (index.numel() == 0) return;
  const Launch launch(self, "gather");
  const Geometry g = geometry(index, self, index.sizes(), plan.dim, "gather");
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    launch.run(index.numel(),
               GatherFn<E>{g, static_cast<const E*>(self.data_ptr()), static_cast<const int64_t*>(index.data_ptr()),
                           static_cast<E*>(out.data_ptr()), launch.bad()});
  });
  launch.check(plan.dim, g.dim_size);
}

void scatter(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
             const TensorBase& index, const TensorBase& src, int64_t /*dim*/) {
  scatter_any(plan, out, self, index, &src, Scalar(0), "scatter");
}

void scatter_value(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                   const TensorBase& index, int64_t /*dim*/, const Scalar& value) {
  scatter_any(plan, out, self, index, nullptr, value, "scatter");
}

void scatter_with_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                         const TensorBase& index, const TensorBase& src, int64_t /*dim*/, std::string_view /*reduce*/) {
  scatter_any(plan, out, self, index, &src, Scalar(0), "scatter");
}

void scatter_value_with_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                               const TensorBase& index, int64_t /*dim*/, const Scalar& value,
                               std::string_view /*reduce*/) {
  scatter_any(plan, out, self, index, nullptr, value, "scatter");
}

void scatter_add(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                 const TensorBase& index, const TensorBase& src, int64_t /*dim*/) {
  scatter_any(plan, out, self, index, &src, Scalar(0), "scatter_add");
}

void scatter_reduce(const meta::ScatterGatherPlan& plan, const TensorBase& out, const TensorBase& self,
                    const TensorBase& index, const TensorBase& src, int64_t /*dim*/, std::string_view /*reduce*/,
                    bool /*include_self*/) {
  scatter_any(plan, out, self, index, &src, Scalar(0), "scatter_reduce");
}

void index_select(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                  int64_t /*dim*/) {
  const IndexGeometry g = index_geometry(plan);
  if (out.numel() == 0) return;
  const Launch launch(self, "index_select");
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    visit_index(index, [&](auto itag) {
      using I = decltype(itag);
      launch.run(out.numel(),
                 IndexSelectFn<E, I>{g, static_cast<const E*>(self.data_ptr()), static_cast<const I*>(index.data_ptr()),
                                     static_cast<E*>(out.data_ptr()), launch.bad()});
    });
  });
  launch.check(plan.dim, g.size);
}

void index_add(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
               const TensorBase& source, int64_t /*dim*/, const Scalar& alpha) {
  index_update<Update::Add>(plan, out, self, index, &source, alpha, false, "index_add");
}

void index_copy(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                const TensorBase& source, int64_t /*dim*/) {
  index_update<Update::Copy>(plan, out, self, index, &source, Scalar(0), false, "index_copy");
}

void index_fill(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
                int64_t /*dim*/, const Scalar& value) {
  index_update<Update::Fill>(plan, out, self, index, nullptr, value, true, "index_fill");
}

void index_fill_tensor(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self,
                       const TensorBase& index, const TensorBase& value, int64_t dim) {
  // The 0-d value comes to the host once (PyTorch's index_fill reads it with .item() too).
  index_fill(plan, out, self, index, dim, value.item());
}

void take(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index) {
  if (plan.n == 0) return;
  const Launch launch(self, "take");
  visit_element_size(element_size(plan.dtype), [&](auto tag) {
    using E = decltype(tag);
    launch.run(plan.n, TakeFn<E>{static_cast<const E*>(self.data_ptr()), static_cast<const int64_t*>(index.data_ptr()),
                                 static_cast<E*>(out.data_ptr()), plan.split.size, launch.bad()});
  });
  launch.check(0, plan.split.size);
}

void put(const meta::IndexPlan& plan, const TensorBase& out, const TensorBase& self, const TensorBase& index,
         const TensorBase& source, bool accumulate) {
  out.copy_(self);
  if (plan.n == 0) return;
  const Launch launch(self, "put");
  visit_dtype(plan.dtype, [&](auto tag) {
    using T = decltype(tag);
    const int64_t* idx = static_cast<const int64_t*>(index.data_ptr());
    const T* x = static_cast<const T*>(source.data_ptr());
    T* y = static_cast<T*>(out.data_ptr());
    const bool walk = are_deterministic_algorithms_enabled() || (accumulate && !kAtomicSum<T>);
    if (walk) launch.run(1, PutWalkFn<T>{idx, x, y, plan.split.size, plan.n, accumulate, launch.bad()});
    else launch.run(plan.n, PutFn<T>{idx, x, y, plan.split.size, accumulate, launch.bad()});
  });
  launch.check(0, plan.split.size);
}

}  // namespace kiln::cuda
