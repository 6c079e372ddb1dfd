// CUDA graphs: capture of the current stream into a graph whose buffers come from a memory
// pool the graph keeps alive (runtime/src/device_cache/block_cache.h), replay, and
// make_graphed_callable on top.
#include <exception>
#include <memory>
#include "kiln/autograd.h"
#include "runtime/src/cuda/cuda_context.h"
#include "runtime/src/device_cache/block_cache.h"

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

TensorFunction make_graphed_callable(TensorFunction fn, const std::vector<Tensor>& sample_inputs, int warmup) {
  const char* op = "cuda::make_graphed_callable";
  detail::check_device(0, op);
  KILN_CHECK(bool(fn), ValueError, op, "fn", "empty function");
  KILN_CHECK(!sample_inputs.empty(), ValueError, op, "sample_inputs", "at least one CUDA tensor is needed");
  KILN_CHECK(warmup >= 0, ValueError, op, "warmup", "expected warmup >= 0, got ", warmup);
  for (size_t i = 0; i < sample_inputs.size(); ++i)
    KILN_CHECK(sample_inputs[i].defined() && sample_inputs[i].is_cuda(), DeviceError, op, "sample_inputs",
               "input ", i, " must be a CUDA tensor");
  const int device = sample_inputs[0].device().index;
  for (size_t i = 1; i < sample_inputs.size(); ++i)
    KILN_CHECK(sample_inputs[i].device().index == device, DeviceError, op, "sample_inputs", "input ", i, " is on ",
               sample_inputs[i].device().str(), ", input 0 on cuda:", device, "; a graph runs on one device");
  auto statics = std::make_shared<std::vector<Tensor>>();
  for (const Tensor& t : sample_inputs) statics->push_back(t.clone());
  auto graph = std::make_shared<Graph>();
  auto outputs = std::make_shared<std::vector<Tensor>>();
  {
    NoGradGuard no_grad;  // forward only: the graph replays values, not autograd history
    Stream side = stream_from_pool(device);
    Event ready;
    ready.record(current_stream(device));
    ready.block(side);  // the side stream sees the clones
    StreamGuard on_side(side);
    for (int i = 0; i < warmup; ++i) (void)fn(*statics);  // lazy initialization happens outside the capture
    side.synchronize();
    CaptureGuard capture(*graph);
    *outputs = fn(*statics);
  }
  return [graph, statics, outputs](const std::vector<Tensor>& inputs) {
    const char* call = "cuda::make_graphed_callable";
    KILN_CHECK(inputs.size() == statics->size(), ValueError, call, "inputs", "expected ", statics->size(),
               " inputs, got ", inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& s = (*statics)[i];
      const Tensor& in = inputs[i];
      KILN_CHECK(in.defined(), ValueError, call, "inputs", "input ", i, " is undefined");
      KILN_CHECK(in.sizes().equals(s.sizes()) && in.dtype() == s.dtype() && in.device() == s.device(), ValueError,
                 call, "inputs", "input ", i, " must be ", dtype_name(s.dtype()), " ", s.shape_str(), " on ",
                 s.device().str(), " as captured, got ", dtype_name(in.dtype()), " ", in.shape_str(), " on ",
                 in.device().str());
      NoGradGuard no_grad;
      Tensor dst = s;
      dst.copy_(in);
    }
    graph->replay();
    return *outputs;
  };
}

}  // namespace kiln::cuda
