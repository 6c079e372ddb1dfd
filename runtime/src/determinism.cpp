// The process-wide deterministic-algorithms flag (kiln/determinism.h).
#include "kiln/determinism.h"
#include <atomic>

namespace kiln {
namespace {
std::atomic<bool> deterministic{false};
}  // namespace

void use_deterministic_algorithms(bool mode) { deterministic.store(mode, std::memory_order_relaxed); }
bool are_deterministic_algorithms_enabled() { return deterministic.load(std::memory_order_relaxed); }

}  // namespace kiln
