// Grad mode and inference mode are per thread, as PyTorch: a NoGradGuard or an InferenceMode
// in one thread does not affect another.
#include "kiln/autograd/graph.h"

namespace kiln {

namespace {
thread_local bool grad_enabled = true;
thread_local bool inference_enabled = false;
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

// As c10::InferenceMode: grad mode follows (off while inference mode is on).
InferenceMode::InferenceMode(bool enabled) : prev_inference_(inference_enabled), prev_grad_(grad_enabled) {
  inference_enabled = enabled;
  grad_enabled = !enabled;
}
InferenceMode::~InferenceMode() {
  inference_enabled = prev_inference_;
  grad_enabled = prev_grad_;
}
bool InferenceMode::is_enabled() { return inference_enabled; }

}  // namespace kiln
