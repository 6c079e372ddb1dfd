#ifndef KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
#define KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
// Random numbers: a counter-based generator (Philox4x32-10, see kiln/philox.h). The random
// ops that draw from it (rand, randn, randint, randperm, bernoulli, normal, uniform_, normal_,
// ...) are in ops/random.yaml; their declarations come with this header.
//
// A Generator is (seed, offset): `offset` counts the 32-bit values consumed so far and is a
// multiple of 4. A request reserves its values under a mutex, then generates them in
// parallel: element i reads Philox block offset/4 + i / (elements per block), so results do
// not depend on the thread count (or, later, on CUDA's launch shape). Per block (4 words):
// 4 elements of float32/float16/bfloat16 uniforms, bernoulli draws and randint with a range
// up to 2^32, 2 elements of float64 or of 64-bit draws; normals come in Box-Muller pairs
// (2 pairs per block in float, 1 in double). Complex tensors fill their real and imaginary
// parts as 2n reals.
#include <cstdint>
#include <mutex>
#include "kiln/gen/ops.h"
#include "kiln/tensor.h"

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
#endif  // KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
