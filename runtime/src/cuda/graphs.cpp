// CUDA graphs: capture of the current stream into a graph whose buffers come from a memory
// pool the graph keeps alive (runtime/src/device_cache/block_cache.h), replay, and
// make_graphed_callable on top.
#include <exception>
#include <memory>
#include "kiln/autograd.h"
#include "autograd/replayed_function.h"
#include "kiln/cuda.h"
#include "kiln/cuda/context.h"
#include "device_cache/block_cache.h"

namespace kiln::cuda {
namespace detail {
device_cache::BlockCache& block_cache();  // device_allocator.cpp
}  // namespace detail

namespace {

cudaStreamCaptureMode to_cuda(CaptureMode m) {
  switch (m) {
    case CaptureMode::Global: return cudaStreamCaptureModeGlobal;
    case CaptureMode::ThreadLocal: return cudaStreamCaptureModeThreadLocal;
    case CaptureMode::Relaxed: return cudaStreamCaptureModeRelaxed;
  }
  return cudaStreamCaptureModeGlobal;
}

// A handle's keepalive releases its reference on the pool when the last copy goes.
MempoolHandle make_handle(uint64_t id) {
  MempoolHandle h;
  h.id = id;
  h.keepalive = std::shared_ptr<void>(reinterpret_cast<void*>(uintptr_t(id)), [](void* p) {
    detail::block_cache().release_pool(uint64_t(reinterpret_cast<uintptr_t>(p)));
  });
  return h;
}

}  // namespace

CaptureStatus capture_status(const Stream& s) {
  detail::check_device(s.device_index(), "cuda::capture_status");
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  KILN_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(s.handle()), &st), "cuda::capture_status", "s");
  return st == cudaStreamCaptureStatusActive ? CaptureStatus::Active
         : st == cudaStreamCaptureStatusInvalidated ? CaptureStatus::Invalidated
                                                    : CaptureStatus::None;
}

MempoolHandle graph_pool_handle() {
  detail::check_device(0, "cuda::graph_pool_handle");
  return make_handle(detail::block_cache().create_pool());
}

struct Graph::Impl {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Stream stream;            // captured on
  bool capturing = false;
  MempoolHandle pool;       // held for as long as the graph lives
  int64_t replays = 0;
  Stream replayed_on;       // the last replay's stream: drained before the pool can be released
};

Graph::Graph() : impl_(std::make_unique<Impl>()) { detail::check_device(0, "cuda::Graph"); }

Graph::~Graph() {
  try {
    reset();
  } catch (...) {  // a destructor does not throw; the driver reclaims the rest at exit
  }
}

void Graph::capture_begin(const MempoolHandle& pool, CaptureMode mode) {
  const char* op = "cuda::Graph::capture_begin";
  KILN_CHECK(!impl_->capturing && !impl_->exec, ValueError, op, "self",
             "this graph is already captured or capturing; reset() it first");
  Stream s = current_stream();
  KILN_CHECK(s.handle() != nullptr, ValueError, op, "stream",
             "cannot capture the legacy default stream; make a pool stream current (StreamGuard)");
  if (pool.id != 0) {
    detail::block_cache().retain_pool(pool.id);
    impl_->pool = make_handle(pool.id);
  } else {
    impl_->pool = graph_pool_handle();
  }
  detail::block_cache().begin_capture(s.device_index(), s.handle(), impl_->pool.id);
  cudaError_t e = cudaStreamBeginCapture(static_cast<cudaStream_t>(s.handle()), to_cuda(mode));
  if (e != cudaSuccess) {
    detail::block_cache().end_capture(s.device_index(), s.handle());
    impl_->pool = {};
    detail::throw_cuda_error(e, op, "mode", "cudaStreamBeginCapture");
  }
  impl_->stream = s;
  impl_->capturing = true;
}

void Graph::capture_end() {
  const char* op = "cuda::Graph::capture_end";
  KILN_CHECK(impl_->capturing, ValueError, op, "self", "capture_end without capture_begin");
  const Stream s = impl_->stream;
  impl_->capturing = false;
  detail::block_cache().end_capture(s.device_index(), s.handle());
  DeviceGuard guard(s.device_index());
  KILN_CUDA_CHECK(cudaStreamEndCapture(static_cast<cudaStream_t>(s.handle()), &impl_->graph), op,
                  "captured work (an operation not allowed during capture invalidates it)");
  KILN_CUDA_CHECK(cudaGraphInstantiate(&impl_->exec, impl_->graph, 0), op, "graph");
}

void Graph::replay() {
  KILN_CHECK(impl_->exec, ValueError, "cuda::Graph::replay", "self", "nothing was captured");
  DeviceGuard guard(impl_->stream.device_index());
  const Stream on = current_stream(impl_->stream.device_index());
  KILN_CUDA_CHECK(cudaGraphLaunch(impl_->exec, static_cast<cudaStream_t>(on.handle())), "cuda::Graph::replay", "");
  ++impl_->replays;
  impl_->replayed_on = on;
}

void Graph::upload() {
  KILN_CHECK(impl_->exec, ValueError, "cuda::Graph::upload", "self", "nothing was captured");
  DeviceGuard guard(impl_->stream.device_index());
  KILN_CUDA_CHECK(cudaGraphUpload(impl_->exec, detail::current_cuda_stream(impl_->stream.device_index())),
                  "cuda::Graph::upload", "");
}

void Graph::reset() {
  if (impl_->capturing) {  // abandon the capture; the stream becomes usable again
    impl_->capturing = false;
    detail::block_cache().end_capture(impl_->stream.device_index(), impl_->stream.handle());
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(static_cast<cudaStream_t>(impl_->stream.handle()), &partial);
    (void)cudaGetLastError();
    if (partial) (void)cudaGraphDestroy(partial);
  }
  if (impl_->replays > 0) {  // a replay may still use the pool's blocks, which may go to others now
    DeviceGuard guard(impl_->replayed_on.device_index());
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(impl_->replayed_on.handle()));
  }
  if (impl_->exec) (void)cudaGraphExecDestroy(impl_->exec);
  if (impl_->graph) (void)cudaGraphDestroy(impl_->graph);
  impl_->exec = nullptr;
  impl_->graph = nullptr;
  impl_->pool = {};
  impl_->replays = 0;
}

int64_t Graph::replay_count() const { return impl_->replays; }
bool Graph::captured() const { return impl_->exec != nullptr; }
MempoolHandle Graph::pool() const { return impl_->pool; }

CaptureGuard::CaptureGuard(Graph& g, const MempoolHandle& pool, CaptureMode mode)
    : graph_(g), uncaught_(std::uncaught_exceptions()) {
  graph_.capture_begin(pool, mode);
}

CaptureGuard::~CaptureGuard() noexcept(false) {
  if (std::uncaught_exceptions() > uncaught_) {
    try {
      graph_.reset();  // an error escaped the captured code: discard, never throw over it
    } catch (...) {
    }
    return;
  }
  graph_.capture_end();
}

namespace {

void check_same_device(const std::vector<Tensor>& ts, const char* op, const char* arg, int device) {
  for (size_t i = 0; i < ts.size(); ++i) {
    KILN_CHECK(ts[i].defined() && ts[i].is_cuda(), DeviceError, op, arg, arg, "[", i, "] must be a CUDA tensor");
    KILN_CHECK(ts[i].device().index == device, DeviceError, op, arg, arg, "[", i, "] is on ", ts[i].device().str(),
               ", sample_inputs[0] on cuda:", device, "; a graph runs on one device");
  }
}

// The eager runs before capture: lazy set-up (cuBLAS handles, workspaces, allocator growth)
// happens here, outside the graph. Backward runs too when it will be captured.
void warm_up(const cuda::TensorFunction& fn, const std::vector<Tensor>& statics, const std::vector<Tensor>& slots,
             int runs) {
  EnableGradGuard record(!slots.empty());
  for (int i = 0; i < runs; ++i) {
    std::vector<Tensor> outs = fn(statics), differentiable, seeds;
    for (const Tensor& o : outs) {
      if (!o.defined() || !o.requires_grad()) continue;
      differentiable.push_back(o);
      seeds.push_back(ones_like(o.detach()));
    }
    if (!differentiable.empty())
      (void)autograd::grad(differentiable, slots, seeds, false, false, /*allow_unused=*/true);
  }
}

// Records a body by capturing it into `graph`; the replay launches the graph.
autograd::detail::Recorder capture_into(std::shared_ptr<Graph> graph, MempoolHandle pool) {
  return [graph, pool](const std::function<void()>& body) -> std::function<void()> {
    {
      CaptureGuard capture(*graph, pool);
      body();
    }
    return [graph] { graph->replay(); };
  };
}

}  // namespace

TensorFunction make_graphed_callable(TensorFunction fn, const std::vector<Tensor>& sample_inputs,
                                     const GraphedOptions& options) {
  const char* op = "cuda::make_graphed_callable";
  detail::check_device(0, op);
  KILN_CHECK(bool(fn), ValueError, op, "fn", "empty function");
  KILN_CHECK(!sample_inputs.empty(), ValueError, op, "sample_inputs", "at least one CUDA tensor is needed");
  KILN_CHECK(options.warmup >= 0, ValueError, op, "warmup", "expected warmup >= 0, got ", options.warmup);
  KILN_CHECK(sample_inputs[0].defined() && sample_inputs[0].is_cuda(), DeviceError, op, "sample_inputs",
             "sample_inputs[0] must be a CUDA tensor");
  const int device = sample_inputs[0].device().index;
  check_same_device(sample_inputs, op, "sample_inputs", device);
  check_same_device(options.parameters, op, "parameters", device);

  // The captured input buffers: private copies, differentiated where the samples require grad.
  std::vector<Tensor> statics, slots;
  for (const Tensor& t : sample_inputs) {
    Tensor buffer = t.detach().clone();
    if (t.requires_grad()) slots.push_back(buffer.requires_grad_(true));
    statics.push_back(buffer);
  }
  for (const Tensor& p : options.parameters)
    if (p.requires_grad()) slots.push_back(p);

  Stream side = stream_from_pool(device);
  Event ready;
  ready.record(current_stream(device));
  ready.block(side);  // the side stream sees the copies and the parameters
  StreamGuard on_side(side);
  warm_up(fn, statics, slots, options.warmup);
  side.synchronize();

  // Forward and backward share one pool: backward reads what forward saved.
  MempoolHandle pool = options.pool.id != 0 ? options.pool : graph_pool_handle();
  autograd::detail::ReplayedFunctionSpec spec;
  spec.op = op;
  spec.fn = std::move(fn);
  spec.static_inputs = std::move(statics);
  spec.parameters = options.parameters;
  spec.allow_unused_input = options.allow_unused_input;
  spec.record_forward = capture_into(std::make_shared<Graph>(), pool);
  spec.record_backward = capture_into(std::make_shared<Graph>(), pool);
  return autograd::detail::make_replayed_function(std::move(spec));
}

TensorFunction make_graphed_callable(TensorFunction fn, const std::vector<Tensor>& sample_inputs, int warmup) {
  GraphedOptions options;
  options.warmup = warmup;
  return make_graphed_callable(std::move(fn), sample_inputs, options);
}

}  // namespace kiln::cuda
