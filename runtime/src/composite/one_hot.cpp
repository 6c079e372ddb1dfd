// one_hot: int64 class indices to int64 rows of num_classes (inferred as max + 1 when -1), with
// PyTorch 1.13's checks of the values (which read them back to the host, as PyTorch does).
#include "kiln/gen/composite.h"
#include "kiln/core.h"
#include "kiln/gen/api/eq.h"
#include "kiln/gen/api/max.h"
#include "kiln/gen/api/min.h"

namespace kiln::composite {

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  KILN_CHECK(self.dtype() == DType::Int64, DTypeError, "one_hot", "self",
             "one_hot is only applicable to index tensor.");
  DimVector sizes;
  sizes = self.sizes();
  if (self.numel() == 0) {
    KILN_CHECK(num_classes > 0, ValueError, "one_hot", "num_classes",
               "Can not infer total number of classes from empty tensor.");
    sizes.push_back(num_classes);
    return kiln::zeros(sizes, TensorOptions(DType::Int64, self.device()));
  }
  const int64_t lo = kiln::min(self).cpu().item<int64_t>();
  KILN_CHECK(lo >= 0, ValueError, "one_hot", "self", "Class values must be non-negative.");
  const int64_t hi = kiln::max(self).cpu().item<int64_t>();
  if (num_classes == -1) num_classes = hi + 1;
  KILN_CHECK(hi < num_classes, ValueError, "one_hot", "num_classes", "Class values must be smaller than num_classes.");
  const Tensor classes = kiln::arange(num_classes, TensorOptions(DType::Int64, self.device()));
  return kiln::eq(self.unsqueeze(-1), classes).to(DType::Int64);
}

}  // namespace kiln::composite
