#!/usr/bin/python3
"""Writes tests/reference/mha/cases.json: torch.nn.functional.multi_head_attention_forward
(PyTorch 1.13, float64) outputs, attention weights and gradients for the configurations
tests/test_multi_head_attention.cpp runs through kiln::multi_head_attention_forward.

Float inputs are 0.5 * sin(0.37 * k + phase) over each tensor's flat index k; masks are literal.
The loss is sum(output * cos(0.11 * k)) + sum(weights * cos(0.23 * k)), so every gradient is
nontrivial; cases whose results hold NaN (a query that sees no key) store no gradients, and an
input the result does not depend on (key beside static_k) has a null gradient.
The file stores the inputs too: the C++ test reads them back. `same` says which of query, key
and value are one tensor ("qkv", "kv"), which PyTorch projects with one product.
Run: /usr/bin/python3 tools/make_mha_references.py
"""
import json
import os

import torch
import torch.nn.functional as F

from reference_waves import as_json, cos_weighted_sum, wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASKS = ("key_padding_mask", "attn_mask")
ORDER = [
    "query",
    "key",
    "value",
    "embed_dim_to_check",
    "num_heads",
    "in_proj_weight",
    "in_proj_bias",
    "bias_k",
    "bias_v",
    "add_zero_attn",
    "dropout_p",
    "out_proj_weight",
    "out_proj_bias",
    "training",
    "key_padding_mask",
    "need_weights",
    "attn_mask",
    "use_separate_proj_weight",
    "q_proj_weight",
    "k_proj_weight",
    "v_proj_weight",
    "static_k",
    "static_v",
    "average_attn_weights",
]


def loss_of(out, w):
    loss = cos_weighted_sum(out, 0.11)
    if w is not None:
        loss = loss + cos_weighted_sum(w, 0.23)
    return loss


def case(
    name,
    L=3,
    S=5,
    N=2,
    E=4,
    H=2,
    kdim=None,
    vdim=None,
    batched=True,
    same=None,
    packed=True,
    in_bias=True,
    out_bias=True,
    bias_kv=False,
    add_zero_attn=False,
    need_weights=True,
    average=True,
    training=True,
    dropout_p=0.0,
    key_padding_mask=None,
    attn_mask=None,
    static_kv=None,
):
    kdim, vdim = kdim or E, vdim or E
    lead = (lambda n: [n, N]) if batched else (lambda n: [n])
    a = {
        "embed_dim_to_check": E,
        "num_heads": H,
        "add_zero_attn": add_zero_attn,
        "dropout_p": dropout_p,
        "training": training,
        "need_weights": need_weights,
        "use_separate_proj_weight": not packed,
        "average_attn_weights": average,
    }
    a["query"] = wave(lead(L) + [E], 1.1)
    a["key"] = a["query"] if same == "qkv" else wave(lead(S) + [kdim], 0.4)
    a["value"] = a["key"] if same in ("qkv", "kv") else wave(lead(S) + [vdim], 2.0)
    a["in_proj_weight"] = wave([3 * E, E], 0.3) if packed else None
    a["q_proj_weight"] = None if packed else wave([E, E], 0.5)
    a["k_proj_weight"] = None if packed else wave([E, kdim], 0.6)
    a["v_proj_weight"] = None if packed else wave([E, vdim], 0.7)
    a["in_proj_bias"] = wave([3 * E], 0.9, scale=0.1) if in_bias else None
    a["bias_k"] = wave([1, 1, E], 1.7) if bias_kv else None
    a["bias_v"] = wave([1, 1, E], 2.9) if bias_kv else None
    a["out_proj_weight"] = wave([E, E], 1.3)
    a["out_proj_bias"] = wave([E], 0.2, scale=0.1) if out_bias else None
    a["key_padding_mask"] = key_padding_mask
    a["attn_mask"] = attn_mask
    a["static_k"] = wave(static_kv, 2.2) if static_kv else None
    a["static_v"] = wave(static_kv, 0.8) if static_kv else None

    leaves = {}
    for k, v in a.items():
        if isinstance(v, torch.Tensor) and v.is_floating_point() and k not in MASKS and k not in leaves:
            if not any(v is t for t in leaves.values()):
                leaves[k] = v.requires_grad_()
    out, w = F.multi_head_attention_forward(*[a[k] for k in ORDER])
    finite = bool(torch.isfinite(out).all()) and (w is None or bool(torch.isfinite(w).all()))
    grads = {}
    if finite:
        g = torch.autograd.grad(loss_of(out, w), list(leaves.values()), allow_unused=True)
        grads = {k: as_json(t) if t is not None else None for k, t in zip(leaves, g)}  # None: unused (static_k)
    args = {k: (as_json(v) if isinstance(v, torch.Tensor) else v) for k, v in a.items()}
    return {
        "name": name,
        "same": same,
        "args": args,
        "output": as_json(out),
        "weights": as_json(w) if w is not None else None,
        "grads": grads,
    }


def main():
    b = torch.tensor
    kpm = b([[False, False, True, False, True], [True, False, False, False, False]])
    mask2 = b(
        [[False, True, False, False, True], [False, False, False, True, True], [True, False, False, False, False]]
    )
    cases = [
        case("self-attention, packed weights, averaged weights", S=3, same="qkv"),
        case(
            "encoder-decoder, key is value, bool key_padding_mask, no weights",
            same="kv",
            key_padding_mask=kpm,
            need_weights=False,
        ),
        case("unbatched, bool 2-D attn_mask, per-head weights", batched=False, attn_mask=mask2, average=False),
        case(
            "unbatched, 3-D float attn_mask, bool key_padding_mask, no weights",
            batched=False,
            attn_mask=wave([2, 3, 5], 0.1),
            key_padding_mask=b([False, True, False, False, False]),
            need_weights=False,
        ),
        case(
            "separate weights (kdim 3, vdim 5), bias_k/bias_v, add_zero_attn, 3-D float attn_mask",
            kdim=3,
            vdim=5,
            packed=False,
            out_bias=False,
            bias_kv=True,
            add_zero_attn=True,
            attn_mask=wave([4, 3, 5], 0.9),
        ),
        case(
            "separate weights, bias_k/bias_v, add_zero_attn, bool masks, no weights",
            kdim=3,
            vdim=5,
            packed=False,
            in_bias=False,
            bias_kv=True,
            add_zero_attn=True,
            key_padding_mask=kpm,
            attn_mask=mask2,
            need_weights=False,
        ),
        case(
            "static_k/static_v, float key_padding_mask, evaluation ignores dropout_p",
            static_kv=[4, 6, 2],
            key_padding_mask=wave([2, 6], 0.5),
            training=False,
            dropout_p=0.5,
            in_bias=False,
        ),
        case("static_k/static_v, no weights", static_kv=[4, 5, 2], need_weights=False, attn_mask=mask2.logical_not()),
        case(
            "bool 3-D attn_mask or bool key_padding_mask",
            attn_mask=torch.arange(60).reshape(4, 3, 5) % 7 == 3,
            key_padding_mask=kpm,
            average=False,
        ),
        case(
            "float 2-D attn_mask with a bool key_padding_mask (-inf), no weights",
            attn_mask=wave([3, 5], 0.3),
            key_padding_mask=kpm,
            need_weights=False,
        ),
        case(
            "float 2-D attn_mask with a bool key_padding_mask (-inf)", attn_mask=wave([3, 5], 0.3), key_padding_mask=kpm
        ),
        case(
            "bool attn_mask with a float key_padding_mask (its nonzeros hide)",
            attn_mask=mask2,
            key_padding_mask=b([[0.0, -1.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 2.0]], dtype=torch.float64),
        ),
        case("uint8 attn_mask, three heads", E=6, H=3, attn_mask=mask2.to(torch.uint8)),
        case("one batch sees no key: NaN", key_padding_mask=b([[False] * 5, [True] * 5])),
        case(
            "one batch sees no key, no weights: NaN", key_padding_mask=b([[False] * 5, [True] * 5]), need_weights=False
        ),
    ]
    os.makedirs(os.path.join(ROOT, "tests", "reference", "mha"), exist_ok=True)
    with open(os.path.join(ROOT, "tests", "reference", "mha", "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
