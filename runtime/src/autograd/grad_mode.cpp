// Grad mode is per thread, as PyTorch: a NoGradGuard in one thread does not affect another.
#include "kiln/autograd/graph.h"

namespace kiln {

namespace {
thread_local bool grad_enabled = true;
}

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

}  // namespace kiln
