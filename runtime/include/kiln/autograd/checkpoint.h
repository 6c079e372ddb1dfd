#ifndef KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_CHECKPOINT_H_
#define KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_CHECKPOINT_H_
// Gradient checkpointing (PyTorch's torch.utils.checkpoint, its reentrant variant): trade
// compute for memory by not keeping a function's activations for backward.
//
//   TensorList out = kiln::autograd::checkpoint(
//       [&](const TensorList& in) { return TensorList{block(in[0], w1, w2)}; }, {x});
//
// Forward runs fn under no-grad, so what it computes inside is freed when it returns; only its
// inputs are saved (version-checked), with the default generator's state when
// preserve_rng_state (kiln has one generator for every device, so random ops on CUDA are
// covered as well). The outputs get one node, CheckpointFunctionBackward. Its backward re-runs
// fn with grad mode on, over the saved inputs and the saved random state (restoring the state
// it found afterwards, so the program's random stream goes on undisturbed), and differentiates
// the recomputed outputs with the incoming gradients: each input that requires grad gets its
// gradient, and leaves fn closes over (weights) get theirs accumulated into .grad, as PyTorch's
// reentrant checkpoint does. Under create_graph the gradients carry history back to the inputs,
// so double backward through a checkpoint works.
//
// Limits (as PyTorch's reentrant variant): a tensor with history (not a leaf) that requires
// grad must reach fn as an input, not through its closure; the gradients of closed-over leaves go
// to their .grad even under autograd::grad or backward(inputs=) (pass such tensors as inputs to
// get them from grad()); under create_graph such a .grad carries a graph that holds its leaf, the
// reference cycle PyTorch warns about for backward(create_graph=True) (reset the .grad to free
// it). If no input requires grad (or grad mode is off), nothing is recorded
// and the outputs have no grad_fn.
#include <functional>
#include "kiln/tensor.h"

namespace kiln::autograd {

TensorList checkpoint(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs,
                      bool preserve_rng_state = true);
// A function of one tensor to one tensor.
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input, bool preserve_rng_state = true);

}  // namespace kiln::autograd
#endif  // KILN_RUNTIME_INCLUDE_KILN_AUTOGRAD_CHECKPOINT_H_
