// Generator: the (seed, offset) state of a Philox stream, advanced under a mutex.
#include "kiln/generator.h"

#include <mutex>
#include "kiln/error.h"

namespace kiln {

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return offset_;
}

GeneratorState Generator::get_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return GeneratorState{seed_, offset_};
}

void Generator::set_state(const GeneratorState& state) {
  // Requests start on block boundaries; a mid-block offset names no request's start.
  KILN_CHECK(state.offset % 4 == 0, ValueError, "Generator::set_state", "state",
             "offset counts 32-bit values in whole Philox blocks and must be a multiple of 4, got ",
             state.offset);
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = state.seed;
  offset_ = state.offset;
}

GeneratorState Generator::reserve(uint64_t num_words) {
  const uint64_t words = (num_words + 3) / 4 * 4;
  std::lock_guard<std::mutex> lock(mutex_);
  GeneratorState start{seed_, offset_};
  offset_ += words;
  return start;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace kiln
