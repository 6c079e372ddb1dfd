#ifndef KILN_RUNTIME_INCLUDE_KILN_META_SCAN_H_
#define KILN_RUNTIME_INCLUDE_KILN_META_SCAN_H_
// The meta step of the scan family (`meta: scan` in ops/*.yaml: cumsum, cumprod, cummax,
// cummin, logcumsumexp, ...). It runs once, before any backend, and decides everything that
// is not arithmetic: the wrapped dim, the result dtype, the result shape and the
// [outer, size, inner] split. A scan kernel then only computes:
//   void kiln::<backend>::<kernel>(const meta::ScanPlan& plan, const Tensor& out[, const Tensor& indices],
//                                  const Tensor& self)
// where `self` is contiguous and already of plan.dtype, and `out` (and `indices`, int64) are
// contiguous tensors of plan.sizes on self's device. The generated op code allocates them, or
// hands the kernel an `out=` tensor directly when it fits.
#include <optional>
#include "kiln/meta/along_dim.h"
#include "kiln/tensor.h"

namespace kiln::meta {

struct ScanPlan {
  int64_t dim = 0;         // wrapped (0 for a 0-d tensor)
  DType dtype = DType::Float32;  // the result's dtype and the one the kernel computes in
  DimVector sizes;         // of the result: self's
  DimSplit split;          // self around dim
};

// PyTorch's rules. Ops with a dtype= argument (`accumulates`: cumsum, cumprod) compute in
// `dtype` when given, else in the destination's dtype for out= and in-place calls
// (`destination`), else in int64 for bool and integer inputs and self's dtype otherwise. The
// others compute in self's dtype (an out= tensor of another dtype receives a cast copy).
ScanPlan scan(const char* op, const Tensor& self, int64_t dim, std::optional<DType> dtype, bool accumulates,
              std::optional<DType> destination);

// The input a scan kernel reads: `self` when it is contiguous and of plan.dtype, else a
// contiguous copy cast to it.
Tensor scan_input(const ScanPlan& plan, const Tensor& self);

}  // namespace kiln::meta
#endif  // KILN_RUNTIME_INCLUDE_KILN_META_SCAN_H_
