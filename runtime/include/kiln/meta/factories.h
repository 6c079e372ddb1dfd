#ifndef KILN_RUNTIME_INCLUDE_KILN_META_FACTORIES_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_FACTORIES_H_
// The meta steps of the computed factories (`meta: arange`, `meta: linspace`, `meta: eye`):
// PyTorch's argument checks and messages, the result's dtype (from the options, or inferred as
// torch does) and sizes, and the values the kernels need. The kernels then fill the new
// contiguous tensor on the options' device:
//   void kiln::<backend>::arange(const meta::RangePlan& plan, const TensorBase& out)
// and likewise linspace / logspace (LinspacePlan) and eye (EyePlan).
#include "kiln/tensor_base.h"

namespace kiln::meta {

struct RangePlan {
  DimVector sizes;  // [n]
  DType dtype = DType::Int64;
  // element i is start + i * step: in int64 for integral dtypes, else in double (float for
  // 16-bit dtypes), as PyTorch's accumulate types
  int64_t int_start = 0, int_step = 0;
  double start = 0, step = 0;
};

struct LinspacePlan {
  DimVector sizes;  // [steps]
  DType dtype = DType::Float32;
  Scalar start, end;
  int64_t steps = 0;
  double base = 10.0;  // logspace: base ** value
};

struct EyePlan {
  DimVector sizes;  // [n, m]
  DType dtype = DType::Float32;
};

RangePlan arange(const char* op, const Scalar& end, const TensorOptions& options);
RangePlan arange(const char* op, const Scalar& start, const Scalar& end, const Scalar& step,
                 const TensorOptions& options);
LinspacePlan linspace(const char* op, const Scalar& start, const Scalar& end, int64_t steps,
                      const TensorOptions& options);
LinspacePlan linspace(const char* op, const Scalar& start, const Scalar& end, int64_t steps, double base,
                      const TensorOptions& options);
EyePlan eye(const char* op, int64_t n, const TensorOptions& options);
EyePlan eye(const char* op, int64_t n, int64_t m, const TensorOptions& options);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_FACTORIES_H_
