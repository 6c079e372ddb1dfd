// all, any (whole tensor and along a dim) and count_nonzero on CPU.
// all/any return bool, except uint8 inputs which give uint8 (PyTorch 1.13 keeps that legacy).
#include "kiln/gen/cpu_kernels.h"
#include "kernels/cpu/reducers.h"

namespace kiln::cpu {
namespace {

template <typename T, typename Out, bool kAll>
struct LogicalReducer {
  using in_t = T;
  using acc_t = bool;
  Out* out;
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
  void write(int64_t o, const acc_t& a) const { out[o] = Out(a); }
};

template <typename T>
struct CountNonzeroReducer {
  using in_t = T;
  using acc_t = int64_t;
  int64_t* out;
  acc_t init(int64_t) const { return 0; }
  acc_t identity(const acc_t&) const { return 0; }
  KILN_INLINE void step(acc_t& a, T x, int64_t) const { a += truthy(x) ? 1 : 0; }
  void run(acc_t& a, const T* p, int64_t n, int64_t s, int64_t r) const { run_by_lanes(*this, a, p, n, s, r); }
  void merge(acc_t& a, const acc_t& b) const { a += b; }
  void write(int64_t o, const acc_t& a) const { out[o] = a; }
};

template <bool kAll>
Tensor logical(const Tensor& self, const ReduceDims& rd) {
  const bool as_uint8 = self.dtype() == DType::UInt8;
  Tensor out = empty(rd.out_sizes, TensorOptions(as_uint8 ? DType::UInt8 : DType::Bool));
  ReducePlan plan = make_reduce_plan(self, rd);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(self.data_ptr());
    if (as_uint8) {
      LogicalReducer<T, uint8_t, kAll> red{static_cast<uint8_t*>(out.data_ptr())};
      run_reduce(plan, src, red);
    } else {
      LogicalReducer<T, bool, kAll> red{static_cast<bool*>(out.data_ptr())};
      run_reduce(plan, src, red);
    }
  });
  return out;
}

}  // namespace

Tensor all_all(const Tensor& self) { return logical<true>(self, reduce_dims(self, IntArrayRef(), false, "all")); }
Tensor any_all(const Tensor& self) { return logical<false>(self, reduce_dims(self, IntArrayRef(), false, "any")); }
Tensor all_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return logical<true>(self, reduce_one_dim(self, dim, keepdim, "all"));
}
Tensor any_dim(const Tensor& self, int64_t dim, bool keepdim) {
  return logical<false>(self, reduce_one_dim(self, dim, keepdim, "any"));
}

Tensor count_nonzero(const Tensor& self, OptIntList dim) {
  ReduceDims rd = reduce_dims(self, dim, false, "count_nonzero");
  Tensor out = empty(rd.out_sizes, TensorOptions(DType::Int64));
  ReducePlan plan = make_reduce_plan(self, rd);
  visit_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    CountNonzeroReducer<T> red{static_cast<int64_t*>(out.data_ptr())};
    run_reduce(plan, static_cast<const T*>(self.data_ptr()), red);
  });
  return out;
}

}  // namespace kiln::cpu
