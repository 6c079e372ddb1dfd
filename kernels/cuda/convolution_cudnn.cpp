// Convolution through cuDNN's graph API. A ConvPlan's two sides map onto cuDNN's picture of a
// forward convolution: the image side is cuDNN's x, the small side its y, and the weight its
// filter [small channels, image channels / groups, *kernel] in both directions (cuDNN reads the
// groups off the channel counts). So a convolution is a forward operation (x = input), its
// transpose a backward-data one (dy = input), and the weight's gradient a backward-filter one
// (x = image side, dy = small side). 1-d convolutions run as 2-d ones over a unit height.
// The execution plan of each shape is built once per thread and cached (cuDNN 9's legacy calls
// rebuild it on every call: about 200 us of host time each, measured on an H200, more than the
// GPU time of a mid-size convolution); a call then only binds its pointers and executes. Plans
// come from cuDNN's heuristics, or with kiln::cuda::set_cudnn_benchmark(true) from timing the
// candidates on the first call (torch.backends.cudnn.benchmark), filtered by kiln's modes: no
// tensor cores for float32 unless TF32 is allowed, no nondeterministic engine under
// use_deterministic_algorithms.
#include "convolution_cudnn.h"

#ifndef KILN_WITH_CUDNN

namespace kiln::cuda::detail {
bool cudnn_convolution(const meta::ConvPlan&, const TensorBase&, const TensorBase&, const TensorBase&) { return false; }
bool cudnn_convolution_backward_weight(const meta::ConvPlan&, const TensorBase&, const TensorBase&, const TensorBase&) {
  return false;
}
}  // namespace kiln::cuda::detail

#else

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <vector>
#include "cudnn_api.h"
#include "kiln/cuda/context.h"
#include "kiln/determinism.h"

namespace kiln::cuda::detail {
namespace {

// A plan needing more workspace than this is passed over.
constexpr int64_t kWorkspaceLimit = int64_t(512) << 20;
// Benchmark mode times at most this many of the heuristics' candidates.
constexpr int kBenchmarkCandidates = 8;

enum class Pass : int64_t { Forward, BackwardData, BackwardFilter };
enum Uid : int64_t { kX = 1, kW = 2, kY = 3 };

// One graph-API descriptor, destroyed with this object unless released. Set and finalize record
// the first failure instead of throwing: a shape cuDNN cannot take falls back to kiln's kernels.
class Descriptor {
 public:
  Descriptor(const CudnnApi& api, cudnnBackendDescriptorType_t type, bool& ok) : api_(api), ok_(ok) {
    if (ok_ && api_.backend_create(type, &d_) != CUDNN_STATUS_SUCCESS) ok_ = false, d_ = nullptr;
  }
  ~Descriptor() {
    if (d_) api_.backend_destroy(d_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  template <typename V>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const V* values) {
    if (ok_ && api_.backend_set(d_, name, type, count, values) != CUDNN_STATUS_SUCCESS) ok_ = false;
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& other) {
    cudnnBackendDescriptor_t d = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d);
  }
  Descriptor& finalize() {
    if (ok_ && api_.backend_finalize(d_) != CUDNN_STATUS_SUCCESS) ok_ = false;
    return *this;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() {
    cudnnBackendDescriptor_t d = d_;
    d_ = nullptr;
    return d;
  }

 private:
  const CudnnApi& api_;
  bool& ok_;
  cudnnBackendDescriptor_t d_ = nullptr;
};

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
  compute = d == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;  // 16-bit inputs sum in float32
  switch (d) {
    case DType::Float32: data = CUDNN_DATA_FLOAT; return true;
    case DType::Float64: data = CUDNN_DATA_DOUBLE; return true;
    case DType::Float16: data = CUDNN_DATA_HALF; return true;
    case DType::BFloat16: data = CUDNN_DATA_BFLOAT16; return true;
    default: return false;
  }
}

// The plan in cuDNN's terms: sizes of x (image side), y (small side) and the filter, and the
// convolution's per-dim parameters; 1-d plans gain a leading unit dim.
struct Geometry {
  std::vector<int64_t> x, y, w, pad, stride, dilation;
  bool ok = true;

  explicit Geometry(const meta::ConvPlan& p) {
    x = {p.batch, p.image_channels};
    y = {p.batch, p.small_channels};
    w = {p.small_channels, p.image_channels / p.groups};
    if (p.dims == 1) {
      x.push_back(1), y.push_back(1), w.push_back(1);
      pad.push_back(0), stride.push_back(1), dilation.push_back(1);
    }
    for (int64_t d = 0; d < p.dims; ++d) {
      x.push_back(p.image_sizes[d]), y.push_back(p.small_sizes[d]), w.push_back(p.kernel[d]);
      pad.push_back(p.padding[d]), stride.push_back(p.stride[d]), dilation.push_back(p.dilation[d]);
      // cuDNN derives y's size from x's; a transposed convolution's output_padding below its
      // stride (or dilation, at stride 1) can leave image rows that no window reaches, which
      // cuDNN refuses: such plans run kiln's kernels
      if ((p.image_sizes[d] + 2 * p.padding[d] - p.dilation[d] * (p.kernel[d] - 1) - 1) / p.stride[d] + 1 !=
          p.small_sizes[d])
        ok = false;
    }
    for (const auto* v : {&x, &y}) {  // element offsets in int32 in many engines
      int64_t n = 1;
      for (int64_t s : *v) n *= s;
      if (n > INT_MAX) ok = false;
    }
  }
};

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
  return strides;
}

// The largest power of two (at most 16) dividing the address: plans are built for it.
int64_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  int64_t align = 16;
  while (align > 1 && a % uintptr_t(align) != 0) align /= 2;
  return align;
}

struct Plan {
  cudnnBackendDescriptor_t plan = nullptr;    // null: cuDNN has none for this shape (kiln's kernels run)
  cudnnBackendDescriptor_t config = nullptr;  // its engine config, kept alive with it
  int64_t workspace = 0;
};

void destroy(const CudnnApi& api, const Plan& p) {
  if (p.plan) api.backend_destroy(p.plan);
  if (p.config) api.backend_destroy(p.config);
}

// A pass's operation descriptor and the attributes that name its tensors (x: the image side, w:
// the weight, y: the small side; a backward pass's gradient among them) and its scalars.
struct PassAttributes {
  cudnnBackendDescriptorType_t operation;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

PassAttributes attributes_of(Pass pass) {
  switch (pass) {
    case Pass::BackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case Pass::BackwardFilter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    case Pass::Forward:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
}

// The operation graph of one pass, kept alive while candidate plans are made from it.
struct Graph {
  bool ok = true;
  std::unique_ptr<Descriptor> x, w, y, conv, op, graph;
};

std::unique_ptr<Graph> make_graph(const CudnnApi& api, cudnnHandle_t h, Pass pass, const Geometry& g,
                                  cudnnDataType_t data, cudnnDataType_t compute, const int64_t align[3]) {
  auto gr = std::make_unique<Graph>();
  bool& ok = gr->ok;
  auto tensor = [&](const std::vector<int64_t>& sizes, int64_t uid, int64_t alignment) {
    auto t = std::make_unique<Descriptor>(api, CUDNN_BACKEND_TENSOR_DESCRIPTOR, ok);
    const std::vector<int64_t> strides = dense_strides(sizes);
    t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &data)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(sizes.size()), sizes.data())
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()), strides.data())
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment)
        .finalize();
    return t;
  };
  gr->x = tensor(g.x, kX, align[0]);
  gr->w = tensor(g.w, kW, align[1]);
  gr->y = tensor(g.y, kY, align[2]);

  const int64_t spatial = int64_t(g.pad.size());
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  gr->conv = std::make_unique<Descriptor>(api, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, ok);
  gr->conv->set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, spatial, g.dilation.data())
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, spatial, g.stride.data())
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, spatial, g.pad.data())
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, spatial, g.pad.data())
      .finalize();

  // alpha = 1, beta = 0 in the compute type
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const bool wide = compute == CUDNN_DATA_DOUBLE;
  const cudnnBackendAttributeType_t scalar = wide ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = wide ? static_cast<const void*>(&one64) : &one32;
  const void* zero = wide ? static_cast<const void*>(&zero64) : &zero32;
  const PassAttributes at = attributes_of(pass);
  gr->op = std::make_unique<Descriptor>(api, at.operation, ok);
  gr->op->set(at.x, *gr->x)
      .set(at.w, *gr->w)
      .set(at.y, *gr->y)
      .set(at.conv, *gr->conv)
      .set(at.alpha, scalar, 1, one)
      .set(at.beta, scalar, 1, zero);
  gr->op->finalize();
  gr->graph = std::make_unique<Descriptor>(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, ok);
  cudnnBackendDescriptor_t op = gr->op->get();
  gr->graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op)
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
      .finalize();
  return gr;
}

// Whether an engine config's numerical notes fit kiln's modes.
bool acceptable(const CudnnApi& api, cudnnBackendDescriptor_t cfg, bool strict_float32, bool deterministic) {
  bool ok = true;
  Descriptor engine(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR, ok);
  if (!ok) return false;
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  if (api.backend_get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (api.backend_get(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                      &n, notes) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < n; ++i) {
    if (deterministic && notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) return false;
    if (strict_float32 &&
        (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))
      return false;
  }
  return true;
}

// The finalized plans of the graph, in the heuristics' order (mode A, then the fallback list),
// that fit the modes and the workspace limit; at most `limit` of them.
std::vector<Plan> candidates(const CudnnApi& api, cudnnHandle_t h, const Graph& g, bool strict_float32,
                             bool deterministic, size_t limit) {
  std::vector<Plan> plans;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    bool ok = true;
    Descriptor heur(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, ok);
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *g.graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
        .finalize();
    int64_t count = 0;
    if (!ok || api.backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS)
      continue;
    std::vector<std::unique_ptr<Descriptor>> owned;
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < count && ok; ++i) {
      owned.push_back(std::make_unique<Descriptor>(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, ok));
      cfgs.push_back(owned.back()->get());
    }
    int64_t got = 0;
    if (!ok || api.backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                               cfgs.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < got && plans.size() < limit; ++i) {
      if (!acceptable(api, cfgs[size_t(i)], strict_float32, deterministic)) continue;
      bool plan_ok = true;
      Descriptor plan(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan_ok);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[size_t(i)])
          .finalize();
      int64_t workspace = 0, n = 0;
      if (!plan_ok || api.backend_get(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                      &workspace) != CUDNN_STATUS_SUCCESS)
        continue;
      if (workspace > kWorkspaceLimit) continue;
      plans.push_back(Plan{plan.release(), owned[size_t(i)]->release(), workspace});
    }
    if (!plans.empty()) break;  // the fallback list only when mode A gave nothing usable
  }
  return plans;
}

// Runs a plan on x, w and y (one of them written), with its workspace from kiln's caching
// allocator (stream-ordered, reused like any tensor's memory). False when cuDNN refuses it.
bool execute(const CudnnApi& api, cudnnHandle_t h, const Plan& plan, void* const pointers[3], Device device,
             const char* op) {
  TensorBase workspace;
  if (plan.workspace > 0) workspace = kiln::detail::empty_dense({plan.workspace}, DType::UInt8, device, op);
  void* ws = plan.workspace > 0 ? workspace.data_ptr() : nullptr;
  const int64_t uids[3] = {kX, kW, kY};
  bool ok = true;
  Descriptor pack(api, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, ok);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids)
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
      .finalize();
  if (!ok) return false;
  KILN_CUDNN_CHECK(api, backend_execute(h, plan.plan, pack.get()), op);
  return true;
}

// Benchmark mode: the candidate with the shortest time over two runs after a warm-up, each on
// the call's own tensors (the destination is written again by the real run).
Plan fastest(const CudnnApi& api, cudnnHandle_t h, std::vector<Plan>& plans, void* const pointers[3], Device device,
             cudaStream_t stream, const char* op) {
  cudaEvent_t start, stop;
  KILN_CUDA_CHECK(cudaEventCreate(&start), op, "cudaEventCreate");
  KILN_CUDA_CHECK(cudaEventCreate(&stop), op, "cudaEventCreate");
  size_t best = 0;
  float best_ms = -1;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!execute(api, h, plans[i], pointers, device, op)) continue;
    KILN_CUDA_CHECK(cudaEventRecord(start, stream), op, "cudaEventRecord");
    for (int r = 0; r < 2; ++r) execute(api, h, plans[i], pointers, device, op);
    KILN_CUDA_CHECK(cudaEventRecord(stop, stream), op, "cudaEventRecord");
    KILN_CUDA_CHECK(cudaEventSynchronize(stop), op, "cudaEventSynchronize");
    float ms = 0;
    KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop), op, "cudaEventElapsedTime");
    if (best_ms < 0 || ms < best_ms) best = i, best_ms = ms;
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  Plan chosen = best_ms < 0 ? Plan{} : plans[best];
  for (size_t i = 0; i < plans.size(); ++i)  // the others are not kept
    if (plans[i].plan != chosen.plan) destroy(api, plans[i]);
  return chosen;
}

// Runs one pass: dst = the pass of a and b (which of x, y, w each is follows the pass).
bool run(Pass pass, const meta::ConvPlan& p, const TensorBase& dst, const TensorBase& a, const TensorBase& b,
         const char* op) {
  auto usable = [](const TensorBase& t) { return t.defined() && t.is_contiguous(); };
  if (!cuda::cudnn_enabled() || p.batch == 0 || !usable(dst) || !usable(a) || !usable(b)) return false;
  const CudnnApi* api = cudnn_or_null();
  if (!api) return false;
  cudnnDataType_t data, compute;
  if (!data_type(p.dtype, data, compute)) return false;
  const Geometry g(p);
  if (!g.ok) return false;

  // x, w, y in the pass's roles
  void* const pointers[3] = {
      pass == Pass::BackwardData ? dst.data_ptr() : a.data_ptr(),
      pass == Pass::BackwardFilter ? dst.data_ptr() : b.data_ptr(),
      pass == Pass::Forward        ? dst.data_ptr()
      : pass == Pass::BackwardData ? a.data_ptr()
                                   : b.data_ptr(),
  };
  const int64_t align[3] = {alignment_of(pointers[0]), alignment_of(pointers[1]), alignment_of(pointers[2])};
  const bool deterministic = are_deterministic_algorithms_enabled();
  const bool tf32 = p.dtype == DType::Float32 && cuda::allow_tf32();
  const bool strict_float32 = p.dtype == DType::Float32 && !tf32;

  const int device = dst.device().index;
  check_device(device, op);
  DeviceGuard guard(device);
  cudaStream_t stream = current_cuda_stream(device);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture), op, "cudaStreamIsCapturing");
  const bool benchmark = cuda::cudnn_benchmark() && !deterministic && capture == cudaStreamCaptureStatusNone;
  cudnnHandle_t h = handle_for(*api, device, stream, op);

  // Plans per thread (built with this thread's handle), never freed: a process keeps few shapes.
  // The key is built in a buffer of the thread's, so a cached shape costs no allocation.
  thread_local std::map<std::vector<int64_t>, Plan> cache;
  thread_local std::vector<int64_t> key;
  key.assign({int64_t(pass), device, int64_t(p.dtype), p.groups, align[0], align[1], align[2], deterministic, tf32,
              benchmark});
  for (const auto* v : {&g.x, &g.y, &g.w, &g.pad, &g.stride, &g.dilation}) key.insert(key.end(), v->begin(), v->end());
  auto it = cache.find(key);
  if (it == cache.end()) {
    Plan chosen;
    std::unique_ptr<Graph> graph = make_graph(*api, h, pass, g, data, compute, align);
    if (graph->ok) {
      std::vector<Plan> plans =
          candidates(*api, h, *graph, strict_float32, deterministic, benchmark ? kBenchmarkCandidates : 1);
      if (benchmark && !plans.empty()) {
        chosen = fastest(*api, h, plans, pointers, dst.device(), stream, op);
      } else if (!plans.empty()) {
        chosen = plans.front();
        for (size_t i = 1; i < plans.size(); ++i) destroy(*api, plans[i]);
      }
      // A plan may refer to its graph's descriptors: a kept plan's graph is never freed either.
      if (chosen.plan) (void)graph.release();
    }
    it = cache.emplace(key, chosen).first;
  }
  if (!it->second.plan) return false;
  return execute(*api, h, it->second, pointers, dst.device(), op);
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
