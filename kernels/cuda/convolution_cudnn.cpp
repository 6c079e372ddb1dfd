// Convolution through cuDNN's convolution API. A ConvPlan's two sides map onto cuDNN's picture of
// a forward convolution: the image side is cuDNN's x, the small side its y, and the weight its
// filter [small channels, image channels / groups, *kernel] in both directions. So a convolution
// is cudnnConvolutionForward(x = input), its transpose cudnnConvolutionBackwardData(dy = input),
// and the weight's gradient cudnnConvolutionBackwardFilter(x = image side, dy = small side).
// 1-d convolutions run as 2-d ones over a unit height (cuDNN takes 2 or 3 spatial dims).
// Algorithms come from cuDNN's heuristics, or with kiln::cuda::set_cudnn_benchmark(true) from
// timing them on the first call of each shape (as PyTorch's torch.backends.cudnn.benchmark),
// filtered by kiln's math and determinism modes, and are cached per shape.
#include "convolution_cudnn.h"

#ifndef KILN_WITH_CUDNN

namespace kiln::cuda::detail {
bool cudnn_convolution(const meta::ConvPlan&, const TensorBase&, const TensorBase&, const TensorBase&) {
  return false;
}
bool cudnn_convolution_backward_weight(const meta::ConvPlan&, const TensorBase&, const TensorBase&,
                                       const TensorBase&) {
  return false;
}
}  // namespace kiln::cuda::detail

#else

#include <climits>
#include <map>
#include <mutex>
#include <vector>
#include "cudnn_api.h"
#include "kiln/cuda/context.h"
#include "kiln/determinism.h"

namespace kiln::cuda::detail {
namespace {

// A workspace above this is not worth it: the next algorithm is taken instead. Benchmark mode
// times the algorithms with a workspace of this size.
constexpr size_t kWorkspaceLimit = size_t(512) << 20;

enum class Pass : int64_t { Forward, BackwardData, BackwardFilter };

// One handle per thread and device, as cuBLAS's (handles are not meant to be shared by threads).
cudnnHandle_t handle_for(const CudnnApi& api, int device, cudaStream_t stream, const char* op) {
  thread_local std::map<int, cudnnHandle_t> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    cudnnHandle_t h = nullptr;
    KILN_CUDNN_CHECK(api, create(&h), op);
    it = handles.emplace(device, h).first;
  }
  KILN_CUDNN_CHECK(api, set_stream(it->second, stream), op);
  return it->second;
}

bool data_type(DType d, cudnnDataType_t& data, cudnnDataType_t& compute) {
  switch (d) {
    case DType::Float32: data = compute = CUDNN_DATA_FLOAT; return true;
    case DType::Float64: data = compute = CUDNN_DATA_DOUBLE; return true;
    case DType::Float16: data = CUDNN_DATA_HALF, compute = CUDNN_DATA_FLOAT; return true;  // float32 sums
    case DType::BFloat16: data = CUDNN_DATA_BFLOAT16, compute = CUDNN_DATA_FLOAT; return true;
    default: return false;
  }
}

// The plan in cuDNN's ints: sizes of x (image side), y (small side) and the filter, and the
// convolution's per-dim parameters; 1-d plans gain a leading unit dim. False past int32.
struct Geometry {
  std::vector<int> x, y, w, pad, stride, dilation;
  bool ok = true;

  explicit Geometry(const meta::ConvPlan& p) {
    const bool one_d = p.dims == 1;
    auto push = [&](std::vector<int>& v, int64_t value) {
      if (value < 0 || value > INT_MAX) ok = false;
      v.push_back(int(value));
    };
    push(x, p.batch), push(x, p.image_channels);
    push(y, p.batch), push(y, p.small_channels);
    push(w, p.small_channels), push(w, p.image_channels / p.groups);
    if (one_d) {
      x.push_back(1), y.push_back(1), w.push_back(1);
      pad.push_back(0), stride.push_back(1), dilation.push_back(1);
    }
    for (int64_t d = 0; d < p.dims; ++d) {
      push(x, p.image_sizes[d]), push(y, p.small_sizes[d]), push(w, p.kernel[d]);
      push(pad, p.padding[d]), push(stride, p.stride[d]), push(dilation, p.dilation[d]);
    }
    // cuDNN derives y's size from x's; a transposed convolution's output_padding below its
    // stride (or dilation, at stride 1) can leave image rows that no window reaches, which cuDNN
    // refuses: such plans run kiln's kernels
    for (int64_t d = 0; d < p.dims; ++d)
      if ((p.image_sizes[d] + 2 * p.padding[d] - p.dilation[d] * (p.kernel[d] - 1) - 1) / p.stride[d] + 1 !=
          p.small_sizes[d])
        ok = false;
    for (const auto* v : {&x, &y}) {  // cuDNN indexes elements with int32
      int64_t n = 1;
      for (int s : *v) n *= s;
      if (n > INT_MAX) ok = false;
    }
  }
};

std::vector<int> dense_strides(const std::vector<int>& sizes) {
  std::vector<int> strides(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max(sizes[i + 1], 1);
  return strides;
}

// The descriptors of one call, destroyed with it.
struct Descriptors {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors(const CudnnApi& a, const Geometry& g, const meta::ConvPlan& p, cudnnDataType_t data,
              cudnnDataType_t compute, cudnnMathType_t math, const char* op)
      : api(a) {
    KILN_CUDNN_CHECK(api, create_tensor(&x), op);
    KILN_CUDNN_CHECK(api, create_tensor(&y), op);
    KILN_CUDNN_CHECK(api, create_filter(&w), op);
    KILN_CUDNN_CHECK(api, create_conv(&conv), op);
    const int nd = int(g.x.size());
    KILN_CUDNN_CHECK(api, set_tensor(x, data, nd, g.x.data(), dense_strides(g.x).data()), op);
    KILN_CUDNN_CHECK(api, set_tensor(y, data, nd, g.y.data(), dense_strides(g.y).data()), op);
    KILN_CUDNN_CHECK(api, set_filter(w, data, CUDNN_TENSOR_NCHW, nd, g.w.data()), op);
    KILN_CUDNN_CHECK(api,
                     set_conv(conv, nd - 2, g.pad.data(), g.stride.data(), g.dilation.data(), CUDNN_CROSS_CORRELATION,
                              compute),
                     op);
    KILN_CUDNN_CHECK(api, set_group_count(conv, int(p.groups)), op);
    KILN_CUDNN_CHECK(api, set_math_type(conv, math), op);
  }
  ~Descriptors() {
    if (conv) api.destroy_conv(conv);
    if (w) api.destroy_filter(w);
    if (y) api.destroy_tensor(y);
    if (x) api.destroy_tensor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

struct Choice {
  int algo = -1;  // -1: none usable, the kiln kernels run
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

// Choices per (pass, device, plan, modes): the heuristics' answer does not change in a process,
// and benchmark mode times each shape once.
std::mutex g_cache_mutex;
std::map<std::vector<int64_t>, Choice> g_cache;

std::vector<int64_t> cache_key(Pass pass, int device, const meta::ConvPlan& p, bool deterministic, bool tf32,
                               bool benchmark) {
  std::vector<int64_t> k{int64_t(pass), device,           int64_t(p.dtype), p.dims,        p.batch, p.groups,
                         p.image_channels, p.small_channels, deterministic,    tf32, benchmark};
  for (const auto* v : {&p.image_sizes, &p.small_sizes, &p.kernel, &p.stride, &p.padding, &p.dilation})
    k.insert(k.end(), v->begin(), v->end());
  return k;
}

// The first of cuDNN's ranked algorithms that ran its check, keeps float32 off TF32 unless
// allowed, is deterministic when that is asked for, and needs a workspace within the limit.
template <typename Perf>
Choice pick(const Perf* perf, int count, bool strict_float32, bool deterministic) {
  for (int i = 0; i < count; ++i) {
    const Perf& r = perf[i];
    if (r.status != CUDNN_STATUS_SUCCESS) continue;
    const bool tensor_cores = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (strict_float32 && tensor_cores) continue;
    if (deterministic && r.determinism != CUDNN_DETERMINISTIC) continue;
    if (r.memory > kWorkspaceLimit) continue;
    return Choice{int(r.algo), strict_float32 ? CUDNN_FMA_MATH : r.mathType};
  }
  return Choice{};
}

// The data of a pass: x, w and y (for the backward passes the gradients stand in place).
struct Operands {
  const void* x;
  const void* w;
  const void* y;
  void* dst;  // the one written: y, x or w
};

// Benchmark mode: cuDNN runs each algorithm on the call's own tensors (the destination is
// overwritten before use) and ranks them by time.
Choice find(const CudnnApi& api, cudnnHandle_t h, const Descriptors& d, Pass pass, const Operands& o,
            bool strict_float32, Device device, const char* op) {
  TensorBase workspace = kiln::detail::empty_dense({int64_t(kWorkspaceLimit)}, DType::UInt8, device, op);
  void* ws = workspace.data_ptr();
  int count = 0;
  switch (pass) {
    case Pass::Forward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      KILN_CUDNN_CHECK(api,
                       find_forward(h, d.x, o.x, d.w, o.w, d.conv, d.y, o.dst, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                    perf, ws, kWorkspaceLimit),
                       op);
      return pick(perf, count, strict_float32, false);
    }
    case Pass::BackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      KILN_CUDNN_CHECK(api,
                       find_backward_data(h, d.w, o.w, d.y, o.y, d.conv, d.x, o.dst,
                                          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf, ws, kWorkspaceLimit),
                       op);
      return pick(perf, count, strict_float32, false);
    }
    case Pass::BackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      KILN_CUDNN_CHECK(api,
                       find_backward_filter(h, d.x, o.x, d.y, o.y, d.conv, d.w, o.dst,
                                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, perf, ws, kWorkspaceLimit),
                       op);
      return pick(perf, count, strict_float32, false);
    }
  }
  return Choice{};
}

// cuDNN's heuristics' ranking (no timing).
Choice heuristic(const CudnnApi& api, cudnnHandle_t h, const Descriptors& d, Pass pass, bool strict_float32,
                 bool deterministic, const char* op) {
  int count = 0;
  switch (pass) {
    case Pass::Forward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      KILN_CUDNN_CHECK(api, forward_algorithms(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf),
                       op);
      return pick(perf, count, strict_float32, deterministic);
    }
    case Pass::BackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      KILN_CUDNN_CHECK(
          api, backward_data_algorithms(h, d.w, d.y, d.conv, d.x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf),
          op);
      return pick(perf, count, strict_float32, deterministic);
    }
    case Pass::BackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      KILN_CUDNN_CHECK(api,
                       backward_filter_algorithms(h, d.x, d.y, d.conv, d.w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                  &count, perf),
                       op);
      return pick(perf, count, strict_float32, deterministic);
    }
  }
  return Choice{};
}

bool usable(const TensorBase& t) { return t.defined() && t.is_contiguous(); }

// Runs one pass: dst = the pass of a and b (which of x, y, w each is follows the pass).
bool run(Pass pass, const meta::ConvPlan& p, const TensorBase& dst, const TensorBase& a, const TensorBase& b,
         const char* op) {
  if (!cuda::cudnn_enabled() || p.batch == 0 || !usable(dst) || !usable(a) || !usable(b)) return false;
  const CudnnApi* api = cudnn_or_null();
  if (!api) return false;
  cudnnDataType_t data, compute;
  if (!data_type(p.dtype, data, compute)) return false;
  const Geometry g(p);
  if (!g.ok) return false;

  const bool deterministic = are_deterministic_algorithms_enabled();
  const Operands operands = pass == Pass::Forward        ? Operands{a.data_ptr(), b.data_ptr(), nullptr, dst.data_ptr()}
                            : pass == Pass::BackwardData ? Operands{nullptr, b.data_ptr(), a.data_ptr(), dst.data_ptr()}
                                                         : Operands{a.data_ptr(), nullptr, b.data_ptr(), dst.data_ptr()};
  const bool tf32 = p.dtype == DType::Float32 && cuda::allow_tf32();
  const bool strict_float32 = p.dtype == DType::Float32 && !tf32;
  const cudnnMathType_t requested = p.dtype == DType::Float16 || p.dtype == DType::BFloat16 ? CUDNN_TENSOR_OP_MATH
                                    : strict_float32                                         ? CUDNN_FMA_MATH
                                                                                             : CUDNN_DEFAULT_MATH;
  const int device = dst.device().index;
  check_device(device, op);
  DeviceGuard guard(device);
  cudaStream_t stream = current_cuda_stream(device);
  cudnnHandle_t h = handle_for(*api, device, stream, op);
  Descriptors d(*api, g, p, data, compute, requested, op);

  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture), op, "cudaStreamIsCapturing");
  const bool benchmark = cuda::cudnn_benchmark() && !deterministic && capture == cudaStreamCaptureStatusNone;

  Choice choice;
  const std::vector<int64_t> key = cache_key(pass, device, p, deterministic, tf32, benchmark);
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) choice = it->second;
  }
  if (choice.algo < 0) {
    choice = benchmark ? find(*api, h, d, pass, operands, strict_float32, dst.device(), op)
                       : heuristic(*api, h, d, pass, strict_float32, deterministic, op);
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    g_cache[key] = choice;
  }
  if (choice.algo < 0) return false;
  KILN_CUDNN_CHECK(*api, set_math_type(d.conv, choice.math), op);

  size_t bytes = 0;
  switch (pass) {
    case Pass::Forward:
      KILN_CUDNN_CHECK(*api, forward_workspace(h, d.x, d.w, d.conv, d.y, cudnnConvolutionFwdAlgo_t(choice.algo), &bytes),
                       op);
      break;
    case Pass::BackwardData:
      KILN_CUDNN_CHECK(
          *api, backward_data_workspace(h, d.w, d.y, d.conv, d.x, cudnnConvolutionBwdDataAlgo_t(choice.algo), &bytes),
          op);
      break;
    case Pass::BackwardFilter:
      KILN_CUDNN_CHECK(*api,
                       backward_filter_workspace(h, d.x, d.y, d.conv, d.w, cudnnConvolutionBwdFilterAlgo_t(choice.algo),
                                                 &bytes),
                       op);
      break;
  }
  // From kiln's caching allocator, so it is stream-ordered and reused like any tensor's memory.
  TensorBase workspace;
  if (bytes > 0) workspace = kiln::detail::empty_dense({int64_t(bytes)}, DType::UInt8, dst.device(), op);
  void* ws = bytes > 0 ? workspace.data_ptr() : nullptr;

  // alpha = 1, beta = 0 in the compute type's host representation
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* one = compute == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&one64) : &one32;
  const void* zero = compute == CUDNN_DATA_DOUBLE ? static_cast<const void*>(&zero64) : &zero32;
  switch (pass) {
    case Pass::Forward:  // y = conv(x = a, w = b)
      KILN_CUDNN_CHECK(*api,
                       forward(h, one, d.x, a.data_ptr(), d.w, b.data_ptr(), d.conv,
                               cudnnConvolutionFwdAlgo_t(choice.algo), ws, bytes, zero, d.y, dst.data_ptr()),
                       op);
      break;
    case Pass::BackwardData:  // x = conv^T(dy = a, w = b)
      KILN_CUDNN_CHECK(*api,
                       backward_data(h, one, d.w, b.data_ptr(), d.y, a.data_ptr(), d.conv,
                                     cudnnConvolutionBwdDataAlgo_t(choice.algo), ws, bytes, zero, d.x, dst.data_ptr()),
                       op);
      break;
    case Pass::BackwardFilter:  // w = grad(x = a, dy = b)
      KILN_CUDNN_CHECK(*api,
                       backward_filter(h, one, d.x, a.data_ptr(), d.y, b.data_ptr(), d.conv,
                                       cudnnConvolutionBwdFilterAlgo_t(choice.algo), ws, bytes, zero, d.w,
                                       dst.data_ptr()),
                       op);
      break;
  }
  return true;
}

}  // namespace

bool cudnn_convolution(const meta::ConvPlan& plan, const TensorBase& out, const TensorBase& input,
                       const TensorBase& weight) {
  return plan.transposed ? run(Pass::BackwardData, plan, out, input, weight, "convolution")
                         : run(Pass::Forward, plan, out, input, weight, "convolution");
}

bool cudnn_convolution_backward_weight(const meta::ConvPlan& plan, const TensorBase& grad_weight,
                                       const TensorBase& grad_output, const TensorBase& input) {
  // x is the image side: the input, or a transposed convolution's output (whose gradient this is)
  const TensorBase& image = plan.transposed ? grad_output : input;
  const TensorBase& small = plan.transposed ? input : grad_output;
  return run(Pass::BackwardFilter, plan, grad_weight, image, small, "convolution_backward_weight");
}

}  // namespace kiln::cuda::detail

#endif  // KILN_WITH_CUDNN
