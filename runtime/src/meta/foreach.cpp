// The meta step of ops over Tensor lists (see kiln/meta/foreach.h).
#include "kiln/meta/foreach.h"
#include <algorithm>
#include "kiln/meta/amp.h"

namespace kiln::meta {

ForeachPlan foreach (const char* op, std::initializer_list<ForeachList> lists,
                     std::initializer_list<ForeachScalar> scalars) {
  ForeachPlan plan;
  // the scalars first, as PyTorch's amp kernel: each is a 1-element float32 tensor
  for (const ForeachScalar& s : scalars) {
    if (!s.tensor.defined()) continue;  // an optional one left out (grad_scale=None)
    check_one_element(op, s.name, s.name, s.tensor, DType::Float32, "a float");
  }
  // the reference device: the first scalar's (found_inf: where the result of the check goes),
  // else the first list's first tensor's
  const char* reference = nullptr;
  for (const ForeachScalar& s : scalars) {
    if (s.tensor.defined()) {
      reference = s.name;
      plan.device = s.tensor.device();
      break;
    }
  }
  const ForeachList* first = lists.size() ? lists.begin() : nullptr;
  if (!reference && first && !first->tensors.empty()) {
    reference = first->name;
    plan.device = first->tensors[0].device();
  }
  for (const ForeachScalar& s : scalars)
    if (s.tensor.defined()) check_device_with(op, s.name, s.tensor, reference, plan.device);
  plan.length = first ? int64_t(first->tensors.size()) : 0;
  for (const ForeachList& l : lists) {
    if (l.kind == ForeachList::kOptional && l.tensors.empty()) continue;
    KILN_CHECK(int64_t(l.tensors.size()) == plan.length, ValueError, op, l.name,
               "Tensor lists must have the same number of tensors, got ", plan.length, " and ", l.tensors.size());
    for (size_t i = 0; i < l.tensors.size(); ++i) {
      const TensorBase& t = l.tensors[i];
      KILN_CHECK(t.defined(), ValueError, op, l.name, "element ", i, " is undefined");
      KILN_CHECK(t.layout() == Layout::Strided, ValueError, op, l.name, "one of ", l.name,
                 " was not a strided tensor.");
      check_device_with(op, l.name, t, reference, plan.device);
      if (l.kind == ForeachList::kScalars) {
        check_one_element(op, l.name, l.name, t, DType::Float32, "a float");
        continue;
      }
      const TensorBase& corresponding = first->tensors[i];
      KILN_CHECK(t.sizes().equals(corresponding.sizes()), ShapeError, op, l.name,
                 "Corresponding tensors in lists must have the same size, got ", shape_str(corresponding.sizes()),
                 " and ", shape_str(t.sizes()));
      KILN_CHECK(t.dtype() == corresponding.dtype(), DTypeError, op, l.name,
                 "Corresponding tensors in lists must have the same dtype, got ", dtype_name(corresponding.dtype()),
                 " and ", dtype_name(t.dtype()));
      plan.max_numel = std::max(plan.max_numel, t.numel());
      if (&l == first) plan.total_numel += t.numel();
    }
  }
  return plan;
}

}  // namespace kiln::meta
