#ifndef KILN_KERNELS_CUDA_REDUCE_LAYOUT_CUH_
#define KILN_KERNELS_CUDA_REDUCE_LAYOUT_CUH_
// How a CUDA reduction meets its input: the reduced dims laid out as rows or read in place as
// columns (Rows, as_rows), the kernel for that layout (reduce_layout), the plain loads and
// stores, and the dtype visitor of the reduction kernels. Shared by reduce.cu and reduce_norm.cu.
#include <cuda_runtime.h>
#include "reduce.cuh"
#include "kiln/strided_views.h"
#include "kiln/tensor_base.h"
#include "kiln/meta/reduction.h"

namespace kiln::cuda::reduce_detail {

// `in` laid out for the kernels: `rows` results, each combining `len` elements. inner == 1:
// dense rows [rows, len]; inner > 1: a dense [outer, len, inner] read as rows = outer * inner
// columns (reduce_columns), which saves the copy that moving the reduced dims last would take.
struct Rows {
  TensorBase data;
  int64_t rows, len, inner = 1;
};
inline Rows as_rows(const TensorBase& in, const meta::ReducePlan& rd) {
  if (in.dim() > 0 && in.is_contiguous()) {
    // Dims of size 1 go anywhere; the others must be [kept..., reduced..., kept...].
    int64_t outer = 1, inner = 1;
    int stage = 0;  // 0: before the reduced block, 1: in it, 2: after it
    bool block = true;
    for (int64_t d = 0; d < in.dim() && block; ++d) {
      const int64_t n = in.size(d);
      if (n == 1) continue;
      const bool reduced = rd.reduced[size_t(d)] != 0;
      if (reduced) {
        if (stage == 2) block = false;
        stage = 1;
      } else if (stage == 0) {
        outer *= n;
      } else {
        stage = 2;
        inner *= n;
      }
    }
    if (block && inner > 1) return {in, outer * inner, rd.reduced_numel, inner};
  }
  DimVector kept, reduced;
  int64_t rows = 1;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (rd.reduced[size_t(d)]) {
      reduced.push_back(d);
    } else {
      kept.push_back(d);
      rows *= in.size(d);
    }
  }
  DimVector perm = kept;
  for (int64_t d : reduced) perm.push_back(d);
  TensorBase p = in.dim() > 0 ? views::permuted(in, perm) : in;
  return {p.contiguous(), rows, rd.reduced_numel};
}

// store(r, reduction of load(x) over result r's elements) for every result r of the layout.
template <typename Acc, typename T, typename Op, typename Load, typename Store>
void reduce_layout(const Rows& r, const Op& op, const Load& load, const Store& store, int dev, const char* op_name) {
  const T* p = static_cast<const T*>(r.data.data_ptr());
  if (r.inner == 1) reduce_rows<Acc>(p, r.rows, r.len, op, load, store, dev, op_name);
  else reduce_columns<Acc>(p, r.rows, r.len, r.inner, op, load, store, dev, op_name);
}

// What a magnitude of T accumulates in: acc_t<T>, or the real part's type for complex T
// (var and norm of complex tensors are real, as on the CPU).
template <typename T>
struct real_acc { using type = acc_t<T>; };
template <typename R>
struct real_acc<complex<R>> { using type = R; };
template <typename T>
using real_acc_t = typename real_acc<T>::type;

// ---- plain load and store
template <typename Acc>
struct CastLoad {
  template <typename T>
  __device__ Acc operator()(T x, int64_t, int64_t) const { return Acc(x); }
};
template <typename Out>
struct CastStore {
  Out* out;
  template <typename Acc>
  __device__ void operator()(int64_t g, Acc a) const { out[g] = Out(a); }
};
template <typename T>
T* mut(const TensorBase& t) {
  return static_cast<T*>(t.data_ptr());
}

// Calls f(T{}) for the dtypes in kAllowed (16/32/64-bit floats, the integers, bool, complex), else a
// DTypeError naming the op and what it supports. Only those are instantiated.
enum DTypeSet : unsigned {
  kFloats = 1, kIntegral = 2, kBool = 4, kComplex = 8,
  kReal = kFloats | kIntegral | kBool, kAll = kReal | kComplex
};
template <unsigned kAllowed, typename F>
void visit(DType d, const char* op, F&& f) {
  if constexpr ((kAllowed & kFloats) != 0) switch (d) {
      case DType::Float16: return f(Half{});
      case DType::BFloat16: return f(BFloat16{});
      case DType::Float32: return f(float{});
      case DType::Float64: return f(double{});
      default: break;
    }
  if constexpr ((kAllowed & kIntegral) != 0) switch (d) {
      case DType::UInt8: return f(uint8_t{});
      case DType::Int8: return f(int8_t{});
      case DType::Int16: return f(int16_t{});
      case DType::Int32: return f(int32_t{});
      case DType::Int64: return f(int64_t{});
      default: break;
    }
  if constexpr ((kAllowed & kBool) != 0)
    if (d == DType::Bool) return f(bool{});
  if constexpr ((kAllowed & kComplex) != 0) switch (d) {
      case DType::Complex64: return f(complex<float>{});
      case DType::Complex128: return f(complex<double>{});
      default: break;
    }
  static_assert((kAllowed & kAll) != 0, "visit needs at least one dtype set");
  KILN_FAIL(DTypeError, op, "self", op, " on CUDA supports ", (kAllowed & kBool) ? "bool, " : "",
            (kAllowed & kIntegral) ? "integer, " : "",
            (kAllowed & kFloats) ? "float16, bfloat16, float32, float64" : "", (kAllowed & kComplex) ? ", complex" : "",
            " tensors; got ", dtype_name(d));
}

}  // namespace kiln::cuda::reduce_detail
#endif  // KILN_KERNELS_CUDA_REDUCE_LAYOUT_CUH_
