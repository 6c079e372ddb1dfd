#ifndef KILN_RUNTIME_SRC_AUTOGRAD_REPLAYED_FUNCTION_H_
#define KILN_RUNTIME_SRC_AUTOGRAD_REPLAYED_FUNCTION_H_
// A function whose forward and backward were recorded once over fixed buffers and are replayed
// per call, with autograd wired around the replays (PyTorch's make_graphed_callables). The
// recorder is CUDA graph capture in cuda::make_graphed_callable; the host tests record by
// re-running, which exercises the same bookkeeping without a device.
#include <functional>
#include <vector>
#include "kiln/tensor.h"

namespace kiln::autograd::detail {

using TensorFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Runs `body` once in recording mode and returns what replays it. A graph replay rewrites the
// buffers body wrote; a re-running recorder runs body again (body then copies into them).
using Recorder = std::function<std::function<void()>(const std::function<void()>& body)>;

struct ReplayedFunctionSpec {
  const char* op = "";                // names errors
  TensorFunction fn;
  std::vector<Tensor> static_inputs;  // input buffers; requires_grad marks inputs to differentiate
  std::vector<Tensor> parameters;     // tensors fn closes over; those requiring grad get gradients
  bool allow_unused_input = false;    // else an input or parameter fn ignores is an error
  Recorder record_forward;
  Recorder record_backward;           // called only when some output has a gradient
};

// Records fn's forward (and its backward, when any static input or parameter requires grad)
// and returns the callable that copies its inputs in and replays. Each call's outputs alias
// the static outputs; each call's backward must run, at most once, before the next call.
TensorFunction make_replayed_function(ReplayedFunctionSpec spec);

}  // namespace kiln::autograd::detail
#endif  // KILN_RUNTIME_SRC_AUTOGRAD_REPLAYED_FUNCTION_H_
