// all, any (whole tensor and along a dim) and count_nonzero on CPU.
// all/any return bool, except uint8 inputs which give uint8 (the meta step's Logical rule).
#include "kiln/gen/kernels/cpu/all_all.h"
#include "kiln/gen/kernels/cpu/all_dim.h"
#include "kiln/gen/kernels/cpu/any_all.h"
#include "kiln/gen/kernels/cpu/any_dim.h"
#include "kiln/gen/kernels/cpu/count_nonzero.h"
#include "reducers.h"

namespace kiln::cpu {
namespace {

// Writes 0 or 1 as a byte: the result's bool or uint8 alike, one instantiation for both.
template <typename T, bool kAll>
struct LogicalReducer {
  using in_t = T;
  using acc_t = bool;
  uint8_t* out;
  acc_t init(int64_t) const { return kAll; }
  acc_t identity(const acc_t&) const { return kAll; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const {
    if constexpr (kAll) a = a & truthy(x);
    else a = a | truthy(x);
  }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const {
    if constexpr (kAll) a = a & b;
    else a = a | b;
  }
  void write(int64_t o, const acc_t& a) const { out[o] = uint8_t(a); }
};

template <bool kAll>
void logical(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    LogicalReducer<T, kAll> red{static_cast<uint8_t*>(out.data_ptr())};
    run_reduce(loops, static_cast<const T*>(self.data_ptr()), red);
  });
}

}  // namespace

void all_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<true>(plan, out, self);
}
void any_all(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<false>(plan, out, self);
}
void all_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<true>(plan, out, self);
}
void any_dim(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  logical<false>(plan, out, self);
}

void count_nonzero(const meta::ReducePlan& plan, const TensorBase& out, const TensorBase& self) {
  ReduceLoops loops = make_reduce_loops(self, plan);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    CountReducer<T, IsNonzero, int64_t> red{static_cast<int64_t*>(out.data_ptr())};
    run_reduce(loops, static_cast<const T*>(self.data_ptr()), red);
  });
}

}  // namespace kiln::cpu
