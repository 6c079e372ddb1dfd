#ifndef KILN_RUNTIME_INCLUDE_KILN_CUDA_H_
#define KILN_RUNTIME_INCLUDE_KILN_CUDA_H_
// kiln::cuda: devices, streams, events, the caching allocator's statistics, pinned memory,
// TF32 and CUDA graphs. kiln/cuda_device.h has all that takes no Tensor; this header adds
// the rest. The same with and without the CUDA backend (a build without it raises DeviceError).
#include <functional>
#include <vector>
#include "kiln/cuda_device.h"
#include "kiln/tensor.h"

namespace kiln::cuda {

// ---- pinned host memory ----
// A CPU tensor in page-locked memory (cached like device blocks): copies from and to it can
// run asynchronously and at full bus speed (is_pinned is in kiln/cuda_device.h).
Tensor pin_memory(const Tensor& t);

// fn captured into CUDA graphs after `warmup` eager runs on a side stream, as
// torch.cuda.make_graphed_callables does. The returned callable copies its inputs into the
// captured input buffers, replays, and returns the captured outputs (overwritten by the next
// call: clone them to keep them). Inputs must match sample_inputs' shapes, dtypes and devices.
//
// When a sample input or a parameter requires grad, fn's backward is captured too: the outputs
// carry autograd history, and backward copies the incoming gradients into the captured
// buffers, replays, and passes the gradients on to the inputs and into the parameters' .grad.
// Each call's backward must run (once) before the next call; breaking that raises
// AutogradError rather than returning another call's gradients. Tensors fn closes over get
// gradients only when listed in `parameters`. Not reentrant: one call at a time.
using TensorFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
struct GraphedOptions {
  int warmup = 3;
  std::vector<Tensor> parameters;   // e.g. a layer's weights; frozen ones (no requires_grad) are skipped
  bool allow_unused_input = false;  // else an input or parameter fn ignores is a ValueError
  // Capture into a pool shared with other graphs, which must then replay in capture order
  // (a later capture may reuse what this backward freed). Empty: a pool of its own.
  MempoolHandle pool;
};
TensorFunction make_graphed_callable(TensorFunction fn, const std::vector<Tensor>& sample_inputs,
                                     const GraphedOptions& options = {});
TensorFunction make_graphed_callable(TensorFunction fn, const std::vector<Tensor>& sample_inputs, int warmup);

}  // namespace kiln::cuda
#endif  // KILN_RUNTIME_INCLUDE_KILN_CUDA_H_
