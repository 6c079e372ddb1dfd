// diff: n-th forward difference along dim, after prepend/append are joined to self (PyTorch 1.13;
// bool tensors differ by "not equal", as PyTorch's logical_xor).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/cat.h"
#include "kiln/gen/api/logical_xor.h"
#include "kiln/gen/api/sub.h"

namespace kiln::composite {
namespace {
void check_joined(const Tensor& self, const Tensor& other, int64_t dim, const char* arg) {
  KILN_CHECK(other.dim() == self.dim(), ShapeError, "diff", arg,
             "diff expects prepend or append to be the same dimension as input");
  for (int64_t i = 0; i < self.dim(); ++i)
    KILN_CHECK(i == dim || other.size(i) == self.size(i), ShapeError, "diff", arg,
               "diff expects the shape of tensor to prepend or append to match that of input except along the "
               "differencing dimension; input.size(",
               i, ") = ", self.size(i), ", but got tensor.size(", i, ") = ", other.size(i));
}
}  // namespace

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  KILN_CHECK(self.dim() >= 1, ShapeError, "diff", "self", "diff expects input to be at least one-dimensional");
  const int64_t d = wrap_dim(dim, self.dim(), "diff");
  if (prepend.defined()) check_joined(self, prepend, d, "prepend");
  if (append.defined()) check_joined(self, append, d, "append");
  Tensor x = self;
  if (prepend.defined() || append.defined()) {
    TensorList parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(self);
    if (append.defined()) parts.push_back(append);
    x = kiln::cat(parts, d);
  }
  if (n <= 0) return x.clone();  // PyTorch 1.13 returns the (joined) input for n <= 0
  for (int64_t k = 0; k < n && x.size(d) > 0; ++k) {
    const int64_t len = x.size(d) - 1;
    const Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == DType::Bool ? kiln::logical_xor(hi, lo) : kiln::sub(hi, lo);
  }
  return x;
}

}  // namespace kiln::composite
