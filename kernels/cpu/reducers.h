#ifndef KILN_KERNELS_CPU_REDUCERS_H_
#define KILN_KERNELS_CPU_REDUCERS_H_
// Reducers shared by several reduction kernels (see reduce_engine.h for the interface).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include "kernel_utils.h"
#include "reduce_engine.h"

namespace kiln::cpu {

// Accumulator of sum/prod: integers in uint64 (wraps modulo 2^64 like PyTorch's int64 sums,
// without signed-overflow UB), 16-bit floats in float (as PyTorch), float32 in double (long
// sums do not drift; contiguous runs add blocks in float first, sum_float_run), complex in
// complex<double>.
template <typename T>
using sum_acc_t = std::conditional_t<
    is_complex_v<T>, complex<double>,
    std::conditional_t<std::is_floating_point_v<T>, double, std::conditional_t<is_reduced_float_v<T>, float, uint64_t>>>;

// Where a sum or product is written: the input's dtype T, or int64 for the integer promotion of
// sum/prod (`widened`: bool and integer inputs); `mean` divides the rounded sum by `count` in T's
// compute type, as PyTorch's mean does (an empty mean: 0 / 0). A branch per output instead of a copy of the
// reduction loops per result type and per sum/mean.
template <typename T>
struct SumResult {
  void* data;
  bool widened = false;
  bool mean = false;
  int64_t count = 0;
  template <typename Acc>
  KILN_INLINE void store(int64_t o, const Acc& a) const {
    if constexpr (is_integral(dtype_of<T>, true)) {
      if (widened) {
        static_cast<int64_t*>(data)[o] = convert<int64_t>(a);
        return;
      }
    }
    T v = convert<T>(a);
    if (mean) {
      using M = opmath_t<T>;
      v = T(M(v) / M(count));
    }
    static_cast<T*>(data)[o] = v;
  }
};

// Whether a sum's result is the int64 of an integer promotion rather than the input's dtype; any
// other pair the meta step cannot have produced.
inline bool sum_widened(const meta::ReducePlan& plan, const TensorBase& in, const char* op) {
  const bool widened = plan.dtype != in.dtype();
  KILN_CHECK(!widened || (plan.dtype == DType::Int64 && is_integral(in.dtype(), true)), InternalError, op, "dtype",
             "unexpected result dtype ", dtype_name(plan.dtype));
  return widened;
}

// A float32 contiguous run's sum into the double accumulator a: kLanes float lanes over blocks
// of at most kFloatSumBlock elements, each block's lanes converted and folded pairwise in double,
// then added to a. Adding in float needs no conversion per element (a double add per element
// caps a long sum at half the memory speed); the error is a block's float rounding, a few ulp of
// its magnitude, never a drift along the sum. Block boundaries follow from n alone.
constexpr int64_t kFloatSumBlock = 1024;

// The pairwise sum in double of kLanes float lanes (lane[k], an array or a vector).
template <int kLanes, typename Lanes>
KILN_INLINE double fold_in_double(const Lanes& lane) {
  double fold[kLanes];
#pragma GCC unroll 32
  for (int k = 0; k < kLanes; ++k) fold[k] = double(lane[k]);
#pragma GCC unroll 8
  for (int width = kLanes / 2; width >= 1; width /= 2) {
#pragma GCC unroll 32
    for (int k = 0; k < width; ++k) fold[k] += fold[k + width];
  }
  return fold[0];
}

template <int kLanes, bool kSkipNaN>
KILN_INLINE void sum_float_run(double& a, const float* p, int64_t n) {
  int64_t i = 0;
  while (n - i >= kLanes) {
    const int64_t end = i + std::min<int64_t>(kFloatSumBlock, (n - i) / kLanes * kLanes);
    float lane[kLanes] = {};
    for (; i < end; i += kLanes) {
#pragma omp simd
      for (int k = 0; k < kLanes; ++k) lane[k] += kSkipNaN && p[i + k] != p[i + k] ? 0.0f : p[i + k];
    }
    a += fold_in_double<kLanes>(lane);
  }
  for (; i < n; ++i) a += kSkipNaN && p[i] != p[i] ? 0.0 : double(p[i]);
}

// sum_float_run for long runs (256 elements or more): its lanes are four vectors of the GCC/Clang
// extension (512-bit registers, or pairs of 256-bit ones under AVX2) in flight at once, added into
// one before the fold. The compiler kept sum_float_run's 32 lanes in memory (a sum of 256k floats
// in L2: 14.1 us, 13.2 with the vectors; libtorch's 12.4). Out of line: inlined, its stack
// alignment slowed the engine's loop over short rows by up to a third.
constexpr int kFloatLanes = 16;
typedef float FloatLanes __attribute__((vector_size(kFloatLanes * sizeof(float))));
typedef int32_t FloatLaneMask __attribute__((vector_size(kFloatLanes * sizeof(float))));

template <bool kSkipNaN>
__attribute__((noinline)) void sum_float_lanes(double& a, const float* p, int64_t n) {
  int64_t i = 0;
  while (n - i >= kFloatLanes) {
    const int64_t end = i + std::min<int64_t>(kFloatSumBlock, (n - i) / kFloatLanes * kFloatLanes);
    auto load = [&](int64_t at) {
      FloatLanes x;
      std::memcpy(&x, p + at, sizeof x);
      if constexpr (kSkipNaN) x = FloatLanes(FloatLaneMask(x) & (x == x));  // NaN lanes to +0
      return x;
    };
    // four vectors in flight while a block allows (an add waits on its vector's previous one)
    FloatLanes l0 = {}, l1 = {}, l2 = {}, l3 = {};
    for (; i + 4 * kFloatLanes <= end; i += 4 * kFloatLanes) {
      l0 += load(i);
      l1 += load(i + kFloatLanes);
      l2 += load(i + 2 * kFloatLanes);
      l3 += load(i + 3 * kFloatLanes);
    }
    for (; i < end; i += kFloatLanes) l0 += load(i);
    const FloatLanes lanes = (l0 + l1) + (l2 + l3);
    a += fold_in_double<kFloatLanes>(lanes);
  }
  for (; i < n; ++i) a += kSkipNaN && p[i] != p[i] ? 0.0 : double(p[i]);
}

// Sum; kSkipNaN adds NaNs as zeros (nansum).
template <typename T, bool kSkipNaN = false>
struct SumReducer {
  using in_t = T;
  using acc_t = sum_acc_t<T>;
  SumResult<T> out;
  acc_t init(int64_t) const { return acc_t(0); }
  acc_t identity(const acc_t&) const { return acc_t(0); }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const {
    if constexpr (kSkipNaN) a += is_nan(x) ? acc_t(0) : convert<acc_t>(x);
    else a += convert<acc_t>(x);
  }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const {
    if constexpr (std::is_same_v<T, float>) {
      if (s == 1 && n >= 16 * kFloatLanes) return sum_float_lanes<kSkipNaN>(a, p, n);
      if (s == 1 && n >= 16) return sum_float_run<8, kSkipNaN>(a, p, n);
      if (s == 1 && !kSkipNaN) {  // a local sum stays in a register whatever the caller inlined
        double t = 0;
        for (int64_t i = 0; i < n; ++i) t += double(p[i]);
        a += t;
        return;
      }
    }
    run_by_lanes(*this, a, p, n, s, r);
  }
  void merge(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, const acc_t& a) const { out.store(o, a); }
};

template <typename T>
struct ProdReducer {
  using in_t = T;
  using acc_t = sum_acc_t<T>;
  SumResult<T> out;
  acc_t init(int64_t) const { return acc_t(1); }
  acc_t identity(const acc_t&) const { return acc_t(1); }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a *= convert<acc_t>(x); }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { a *= b; }
  void write(int64_t o, const acc_t& a) const { out.store(o, a); }
};

// max/min with NaN propagation (any NaN makes the result NaN). Real types only.
template <typename T, bool kMax, typename Out = T>
struct MinMaxReducer {
  using in_t = T;
  using acc_t = opmath_t<T>;
  Out* out;
  static acc_t ident() {
    if constexpr (std::is_floating_point_v<acc_t>)
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    else
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
  static KILN_INLINE void pick(acc_t& a, acc_t x) {
    if constexpr (std::is_floating_point_v<acc_t>)
      a = (a != a || (kMax ? a >= x : a <= x)) ? a : x;  // a NaN stays; a NaN x wins
    else
      a = (kMax ? x > a : x < a) ? x : a;
  }
  acc_t init(int64_t) const { return ident(); }
  acc_t identity(const acc_t&) const { return ident(); }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { pick(a, acc_t(x)); }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { pick(a, b); }
  void write(int64_t o, const acc_t& a) const { out[o] = Out(a); }
};

// Counts, per output, the elements for which Pred{}(x) holds, in Count (count_nonzero: int64;
// nanmean's divisor: double, so the division needs no cast).
template <typename T, typename Pred, typename Count>
struct CountReducer {
  using in_t = T;
  using acc_t = Count;
  Count* out;
  acc_t init(int64_t) const { return 0; }
  acc_t identity(const acc_t&) const { return 0; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a += Pred{}(x) ? Count(1) : Count(0); }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, const acc_t& a) const { out[o] = a; }
};
struct IsNonzero {
  template <typename T> KILN_INLINE bool operator()(T x) const { return truthy(x); }
};
struct IsNotNaN {
  template <typename T> KILN_INLINE bool operator()(T x) const { return !is_nan(x); }
};

}  // namespace kiln::cpu
#endif  // KILN_KERNELS_CPU_REDUCERS_H_
