#ifndef KILN_OPTIM_INCLUDE_KILN_CLIP_GRAD_H_
#define KILN_OPTIM_INCLUDE_KILN_CLIP_GRAD_H_
// Gradient clipping, torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (PyTorch 1.13), applied
// to the .grad of each parameter that has one, in place, without recording history:
//   loss.backward(); nn::utils::clip_grad_norm_(params, /*max_norm=*/1.0); opt.step();
#include <limits>
#include "kiln/tensor.h"

namespace kiln::nn::utils {

// Scales the gradients so that their joint norm (the norm of the per-tensor norms, computed by
// _foreach_norm) is at most max_norm: each is multiplied by min(1, max_norm / (total + 1e-6)).
// Returns the total norm before clipping (a 0-d tensor; 0 when no parameter has a gradient).
// norm_type is any p >= 0 or infinity. error_if_nonfinite: a NaN or infinite total raises
// ValueError instead of scaling by it.
Tensor clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const TensorList& parameters, double clip_value);

}  // namespace kiln::nn::utils
#endif  // KILN_OPTIM_INCLUDE_KILN_CLIP_GRAD_H_
