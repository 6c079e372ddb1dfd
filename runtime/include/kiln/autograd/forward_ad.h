#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_AD_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_AD_H_
// Forward-mode AD, as torch.autograd.forward_ad:
//   {
//     autograd::forward_ad::DualLevel level;
//     Tensor x = autograd::forward_ad::make_dual(primal, tangent);
//     Tensor y = kiln::sin(x) * 2;
//     auto [value, jvp] = autograd::forward_ad::unpack_dual(y);  // jvp = cos(primal) * tangent * 2
//   }
// Every op pushes tangents through: a `jvp:` formula of its registry entry, one derived from its
// derivative (pointwise ops), its own call on the tangents (linear ops, views), or for the rest
// one backward pass over its derivative formula (the coverage report says which). As in PyTorch
// 1.13, one level is live at a time, and tangents are computed with recorded ops, so a reverse
// pass through them works (hessian-vector products).
//
// autograd::jvp and autograd::vjp (torch.autograd.functional's) evaluate a function with its
// Jacobian-vector or vector-Jacobian product.
#include <cstdint>
#include <functional>
#include <utility>
#include "kiln/autograd/forward_grad.h"
#include "kiln/tensor.h"

namespace kiln::autograd {
namespace forward_ad {

// Enters a new dual level for its lifetime; leaving it forgets every tangent set at it.
// Entering one while another is live raises NotImplementedError (nested levels, as PyTorch 1.13).
class DualLevel {
 public:
  DualLevel();
  ~DualLevel();
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
  uint64_t level() const { return level_; }

 private:
  uint64_t level_;
};

// A view of `primal` (gradients flow back to it) carrying `tangent` at the live level. The
// tangent must have primal's sizes, dtype and device, and primal a floating or complex dtype.
Tensor make_dual(const Tensor& primal, const Tensor& tangent);

struct UnpackedDual {
  Tensor primal;   // a view of the dual tensor, without its tangent
  Tensor tangent;  // undefined when it has none at the live level
};
UnpackedDual unpack_dual(const Tensor& tensor);

}  // namespace forward_ad

// (fn(primals), J_fn(primals) · tangents): one forward pass with dual inputs. `tangents` match
// `primals` one for one; an output that does not depend on the inputs gets a zero tangent.
// create_graph keeps reverse-mode history through both results (else they are detached).
std::pair<TensorList, TensorList> jvp(const std::function<TensorList(const TensorList&)>& fn, const TensorList& primals,
                                      const TensorList& tangents, bool create_graph = false);

// (fn(inputs), vᵀ J_fn(inputs)): one backward pass; `v` matches the outputs one for one
// (may be empty when every output has one element). An input the outputs do not depend on gets a
// zero gradient, as torch.autograd.functional.vjp.
std::pair<TensorList, TensorList> vjp(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs,
                                      const TensorList& v = {}, bool create_graph = false);

}  // namespace kiln::autograd
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_FORWARD_AD_H_
