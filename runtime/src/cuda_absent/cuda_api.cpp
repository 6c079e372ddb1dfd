// kiln::cuda in a build without the CUDA backend (KILN_CUDA=OFF, or no toolkit found): the
// queries answer "nothing here", everything else raises DeviceError naming the call.
#include "kiln/cuda.h"
#include "kiln/error.h"

namespace kiln::cuda {
namespace {
constexpr const char* kWhy = "kiln was built without CUDA (configure with a CUDA toolkit and -DKILN_CUDA=ON or AUTO)";
[[noreturn]] void absent(const char* op) { KILN_FAIL(DeviceError, op, "", kWhy); }
}  // namespace

bool is_built() { return false; }
bool is_available() { return false; }
int device_count() { return 0; }
std::string unavailable_reason() { return kWhy; }
int current_device() { absent("cuda::current_device"); }
void set_device(int) { absent("cuda::set_device"); }
DeviceGuard::DeviceGuard(int) { absent("cuda::DeviceGuard"); }
DeviceGuard::~DeviceGuard() = default;

bool Stream::query() const { absent("cuda::Stream::query"); }
void Stream::synchronize() const { absent("cuda::Stream::synchronize"); }
Stream default_stream(int) { absent("cuda::default_stream"); }
Stream current_stream(int) { absent("cuda::current_stream"); }
void set_current_stream(const Stream&) { absent("cuda::set_current_stream"); }
Stream stream_from_pool(int, bool) { absent("cuda::stream_from_pool"); }
int stream_count(int) { absent("cuda::stream_count"); }
void synchronize(int) { absent("cuda::synchronize"); }
StreamGuard::StreamGuard(const Stream&) { absent("cuda::StreamGuard"); }
StreamGuard::~StreamGuard() = default;

Event::Event(bool timing) : timing_(timing) { absent("cuda::Event"); }
Event::~Event() = default;
void Event::record(const Stream&) { absent("cuda::Event::record"); }
void Event::block(const Stream&) { absent("cuda::Event::block"); }
bool Event::query() const { absent("cuda::Event::query"); }
void Event::synchronize() const { absent("cuda::Event::synchronize"); }
float Event::elapsed_ms(const Event&) const { absent("cuda::Event::elapsed_ms"); }

MemoryStats memory_stats(int) { absent("cuda::memory_stats"); }
void reset_peak_memory_stats(int) { absent("cuda::reset_peak_memory_stats"); }
void empty_cache() {}  // nothing is cached
void record_stream(const TensorBase&, const Stream&) { absent("cuda::record_stream"); }
Tensor pin_memory(const Tensor&) { absent("cuda::pin_memory"); }
bool is_pinned(const TensorBase&) { return false; }
void set_allow_tf32(bool) { absent("cuda::set_allow_tf32"); }
bool allow_tf32() { return false; }
bool cudnn_is_available() { return false; }
int cudnn_version() { return 0; }
void set_cudnn_enabled(bool) { absent("cuda::set_cudnn_enabled"); }
bool cudnn_enabled() { return false; }
void set_cudnn_benchmark(bool) { absent("cuda::set_cudnn_benchmark"); }
bool cudnn_benchmark() { return false; }

CaptureStatus capture_status(const Stream&) { absent("cuda::capture_status"); }
MempoolHandle graph_pool_handle() { absent("cuda::graph_pool_handle"); }
struct Graph::Impl {};
Graph::Graph() { absent("cuda::Graph"); }
Graph::~Graph() = default;
void Graph::capture_begin(const MempoolHandle&, CaptureMode) { absent("cuda::Graph::capture_begin"); }
void Graph::capture_end() { absent("cuda::Graph::capture_end"); }
void Graph::replay() { absent("cuda::Graph::replay"); }
void Graph::upload() { absent("cuda::Graph::upload"); }
void Graph::reset() { absent("cuda::Graph::reset"); }
int64_t Graph::replay_count() const { absent("cuda::Graph::replay_count"); }
bool Graph::captured() const { absent("cuda::Graph::captured"); }
MempoolHandle Graph::pool() const { absent("cuda::Graph::pool"); }
CaptureGuard::CaptureGuard(Graph& g, const MempoolHandle&, CaptureMode) : graph_(g) { absent("cuda::CaptureGuard"); }
CaptureGuard::~CaptureGuard() noexcept(false) {}
TensorFunction make_graphed_callable(TensorFunction, const std::vector<Tensor>&, const GraphedOptions&) {
  absent("cuda::make_graphed_callable");
}
TensorFunction make_graphed_callable(TensorFunction, const std::vector<Tensor>&, int) {
  absent("cuda::make_graphed_callable");
}

}  // namespace kiln::cuda
