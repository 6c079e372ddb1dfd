"""Reference arithmetic of kiln's fused optimizer ops for tools/make_references.py (`torch:
refs.<function>` in ops/optim.yaml). PyTorch 1.13 has only a CUDA `_fused_adam_` and no
`_fused_adamw_` or `_fused_sgd_`; these follow the update rules of torch.optim.Adam, AdamW and
SGD (PyTorch 2.x's fused kernels: grad_scale divides the gradient, which is stored back; a
found_inf of 1 skips the step). Each tensor is updated in float64 and rounded once to its dtype.
"""
import math

import torch


def _skipped(found_inf):
    return found_inf is not None and bool(found_inf.item() == 1)


def _unscaled(g, grad_scale):
    if grad_scale is None:
        return g.double()
    G = g.double() / grad_scale.double().reshape(())
    g.copy_(G)  # the fused kernels store the unscaled gradient
    return G


def _adam(
    decoupled,
    self,
    grads,
    exp_avgs,
    exp_avg_sqs,
    max_exp_avg_sqs,
    state_steps,
    lr,
    beta1,
    beta2,
    weight_decay,
    eps,
    amsgrad,
    maximize,
    grad_scale=None,
    found_inf=None,
):
    if _skipped(found_inf):
        return
    for i, p in enumerate(self):
        G = _unscaled(grads[i], grad_scale)
        if maximize:
            G = -G
        P = p.double()
        if weight_decay != 0:
            if decoupled:
                P = P - lr * weight_decay * P
            else:
                G = G + weight_decay * P
        M = beta1 * exp_avgs[i].double() + (1 - beta1) * G
        V = beta2 * exp_avg_sqs[i].double() + (1 - beta2) * G * G
        step = float(state_steps[i].item())
        second = V
        if amsgrad:
            second = torch.maximum(max_exp_avg_sqs[i].double(), V)
            max_exp_avg_sqs[i].copy_(second)
        denom = second.sqrt() / math.sqrt(1 - beta2**step) + eps
        p.copy_(P - lr / (1 - beta1**step) * M / denom)
        exp_avgs[i].copy_(M)
        exp_avg_sqs[i].copy_(V)


def fused_adam(*args, **kwargs):
    _adam(False, *args, **kwargs)


def fused_adamw(*args, **kwargs):
    _adam(True, *args, **kwargs)


def fused_sgd(
    self,
    grads,
    momentum_buffer_list,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
    is_first_step,
    grad_scale=None,
    found_inf=None,
):
    if _skipped(found_inf):
        return
    for i, p in enumerate(self):
        G = _unscaled(grads[i], grad_scale)
        if maximize:
            G = -G
        P = p.double()
        if weight_decay != 0:
            G = G + weight_decay * P
        if momentum != 0:
            buf = momentum_buffer_list[i]
            B = G if is_first_step else momentum * buf.double() + (1 - dampening) * G
            buf.copy_(B)
            G = G + momentum * B if nesterov else B
        p.copy_(P - lr * G)
