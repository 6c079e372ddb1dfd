#ifndef KILN_TESTS_SUPPORT_GRADCHECK_H_
#define KILN_TESTS_SUPPORT_GRADCHECK_H_
// Finite-difference checks of autograd in float64 and complex128: the full Jacobian computed by
// backward passes against central differences (eps 1e-6, atol 1e-5, rtol 1e-3, as
// torch.autograd.gradcheck). A complex tensor counts as its real and imaginary parts, and a
// gradient is read in PyTorch's convention (conjugate Wirtinger): backward(g) gives
// dL/dx + i dL/dy for each input z = x + iy, where L = Re(sum(conj(g) * output)).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include "kiln/tensor.h"

namespace kiln::testing {

// A function of float64 or complex128 leaves returning float64 or complex128 outputs.
using Fn = std::function<TensorList(const TensorList&)>;

// Empty when autograd's Jacobian of `f` at `x0` (one backward per output element) matches
// central differences; otherwise the first differing entry, named with `names`. Adds the
// number of entries compared to `compared`.
std::string compare_jacobians(const Fn& f, const TensorList& x0, const std::vector<std::string>& names, Device device,
                              size_t& compared);

// Empty when forward-mode AD's J_f(x0) v (one pass with dual inputs, random v seeded by `seed`)
// matches central differences along v, and <J v, u> = <v, J^T u> holds for a random u with J^T u
// from reverse mode; otherwise what differs. Adds the number of entries compared.
std::string compare_jvp(const Fn& f, const TensorList& x0, const std::vector<std::string>& names, Device device,
                        uint64_t seed, size_t& compared);

// (x..., v...) -> v^T J_f(x) computed with create_graph; checking its Jacobian checks the
// second-order gradients of f. `nx` leaves are inputs of f, the rest one vector per output.
Fn vjp_fn(const Fn& f, size_t nx);

// Copies of `xs` (float64 or complex128) as leaves requiring grad, optionally with real parameter
// `index` of input `input` (element index/2's real or imaginary part, for a complex input)
// shifted by `delta`.
TensorList leaves_of(const TensorList& xs, Device device, size_t input = SIZE_MAX, size_t index = 0, double delta = 0);

}  // namespace kiln::testing
#endif  // KILN_TESTS_SUPPORT_GRADCHECK_H_
