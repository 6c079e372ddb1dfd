#ifndef KILN_RUNTIME_INCLUDE_KILN_DETERMINISM_H_
#define KILN_RUNTIME_INCLUDE_KILN_DETERMINISM_H_
// kiln::use_deterministic_algorithms, as torch.use_deterministic_algorithms: with it on, every
// op gives the same bits from run to run on one device. kiln's CPU kernels always do. On CUDA,
// the ops that add with atomics by default (scatter_add, scatter_reduce's sum, index_add,
// put with accumulate) switch to kernels that walk each destination's indices in order; where
// PyTorch raises for want of a deterministic kernel, kiln has one.
namespace kiln {

void use_deterministic_algorithms(bool mode);
bool are_deterministic_algorithms_enabled();

}  // namespace kiln
#endif  // KILN_RUNTIME_INCLUDE_KILN_DETERMINISM_H_
