// The CPU's Philox fills (device_random.h): the dtype dispatch over random_fill.h's loops.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include "device_random.h"
#include "random_fill.h"

namespace kiln::cpu::detail {

using random_detail::fill_bernoulli;
using random_detail::fill_normal;
using random_detail::fill_randint;
using random_detail::fill_uniform;

void uniform_fill(TensorBase& t, double from, double to, Generator& gen) {
  const int64_t n = t.numel();
  void* p = t.data_ptr();
  switch (t.dtype()) {
    case DType::Float16: return fill_uniform(static_cast<Half*>(p), n, from, to, gen);
    case DType::BFloat16: return fill_uniform(static_cast<BFloat16*>(p), n, from, to, gen);
    case DType::Float32: return fill_uniform(static_cast<float*>(p), n, from, to, gen);
    case DType::Float64: return fill_uniform(static_cast<double*>(p), n, from, to, gen);
    case DType::Complex64: return fill_uniform(static_cast<float*>(p), 2 * n, from, to, gen);
    case DType::Complex128: return fill_uniform(static_cast<double*>(p), 2 * n, from, to, gen);
    default: KILN_FAIL(InternalError, "uniform_", "self", "dtype ", dtype_name(t.dtype()), " was not checked");
  }
}

void normal_fill(TensorBase& t, double mean, double std, Generator& gen) {
  const int64_t n = t.numel();
  void* p = t.data_ptr();
  const double part_std = std / std::sqrt(2.0);
  switch (t.dtype()) {
    case DType::Float16: return fill_normal(static_cast<Half*>(p), n, mean, std, gen);
    case DType::BFloat16: return fill_normal(static_cast<BFloat16*>(p), n, mean, std, gen);
    case DType::Float32: return fill_normal(static_cast<float*>(p), n, mean, std, gen);
    case DType::Float64: return fill_normal(static_cast<double*>(p), n, mean, std, gen);
    case DType::Complex64: return fill_normal(static_cast<float*>(p), 2 * n, mean, part_std, gen);
    case DType::Complex128: return fill_normal(static_cast<double*>(p), 2 * n, mean, part_std, gen);
    default: KILN_FAIL(InternalError, "normal_", "self", "dtype ", dtype_name(t.dtype()), " was not checked");
  }
}

void randint_fill(TensorBase& t, int64_t low, uint64_t range, Generator& gen) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!is_complex_v<S>) fill_randint(static_cast<S*>(t.data_ptr()), t.numel(), low, range, gen);
  });
}

void bernoulli_fill(TensorBase& t, const TensorBase& p, Generator& gen) {
  visit_dtype(t.dtype(), [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_same_v<S, double> || std::is_same_v<S, float> || std::is_same_v<S, Half> ||
                  std::is_same_v<S, BFloat16>)
      fill_bernoulli(static_cast<S*>(t.data_ptr()), static_cast<const S*>(p.data_ptr()), t.numel(), gen);
  });
}

// Sorts indices by 64-bit random keys (PermKeyBlock), ties by index: deterministic, and what
// the CUDA device's stable radix sort of the same keys gives (kernels/cuda/randperm.cu).
void randperm_fill(TensorBase& t, Generator& gen) {
  const int64_t n = t.numel();
  // kiln tensors rather than std::vectors: an n too large to hold is the allocator's
  // kiln::Error naming the op, never std::length_error or std::bad_alloc
  const int64_t size[] = {n};
  TensorBase key_buffer = kiln::detail::empty_dense(IntArrayRef(size, 1), DType::Int64, kCPU, "randperm");
  TensorBase perm_buffer = kiln::detail::empty_dense(IntArrayRef(size, 1), DType::Int64, kCPU, "randperm");
  auto* keys = static_cast<uint64_t*>(key_buffer.data_ptr());
  auto* perm = static_cast<int64_t*>(perm_buffer.data_ptr());
  random_detail::fill_blocks(keys, n, random_detail::PermKeyBlock{}, gen);
  std::iota(perm, perm + n, int64_t(0));
  std::sort(perm, perm + n, [&](int64_t a, int64_t b) { return keys[a] != keys[b] ? keys[a] < keys[b] : a < b; });
  visit_dtype(t.dtype(), [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!is_complex_v<S>) {
      S* p = static_cast<S*>(t.data_ptr());
      for (int64_t i = 0; i < n; ++i) p[i] = S(perm[i]);
    }
  });
}

}  // namespace kiln::cpu::detail
