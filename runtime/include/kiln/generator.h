#ifndef KILN_RUNTIME_INCLUDE_KILN_GENERATOR_H_
#define KILN_RUNTIME_INCLUDE_KILN_GENERATOR_H_
// kiln's random number generator, without the random ops (kiln/random.h has both; the CUDA
// random kernels include this one, which never changes when an op is added).
#include <cstdint>
#include <mutex>

namespace kiln {

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // 32-bit values consumed, a multiple of 4
};

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  uint64_t seed() const;
  void manual_seed(uint64_t seed);  // also restarts the stream (offset 0)
  uint64_t offset() const;
  GeneratorState get_state() const;
  void set_state(const GeneratorState& state);  // ValueError when offset % 4 != 0
  // Reserves `num_words` 32-bit values (rounded up to whole blocks) and returns the state they
  // start at. Backends generate from it without holding the lock.
  GeneratorState reserve(uint64_t num_words);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

Generator& default_generator();
void manual_seed(uint64_t seed);  // seeds the default generator

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_GENERATOR_H_
