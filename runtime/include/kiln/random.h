#ifndef KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
#define KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
// Random numbers: a counter-based generator (Philox4x32-10, see kiln/philox.h) and the
// random creation and fill ops.
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

// Uniform on [0, 1) / standard normal, floating or complex dtypes.
Tensor rand(IntArrayRef sizes, TensorOptions opts = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef sizes, TensorOptions opts = {}, Generator* gen = nullptr);
// Integers uniform on [low, high); any real dtype that holds low and high - 1.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions opts = TensorOptions(DType::Int64),
               Generator* gen = nullptr);
// A random permutation of 0 .. n-1 (integer or floating dtype).
Tensor randperm(int64_t n, TensorOptions opts = TensorOptions(DType::Int64), Generator* gen = nullptr);
// 1 with probability p (elementwise, p in [0, 1]), in p's floating dtype and device.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);

// In-place fills of floating or complex tensors, in the tensor's logical (row-major) order.
Tensor& uniform_(Tensor& self, double from = 0, double to = 1, Generator* gen = nullptr);
Tensor& normal_(Tensor& self, double mean = 0, double std = 1, Generator* gen = nullptr);

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_RANDOM_H_
