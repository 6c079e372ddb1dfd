#!/usr/bin/python3
"""Writes tests/reference/rnn/layers.json: torch.nn.LSTM / GRU (PyTorch 1.13, float64) outputs and
gradients for the configurations tests/test_rnn.cpp runs through kiln::lstm / kiln::gru.

Weights, inputs and states are 0.5 * sin(0.37 * k + phase) over each tensor's flat index k, and
the loss is sum(output * cos(0.11 * k)) + sum(h_n * cos(0.23 * k)) (+ the same for c_n), so every
gradient is nontrivial. The file stores the inputs too: the C++ test reads them back.
Run: /usr/bin/python3 tools/make_rnn_layer_references.py
"""
import json
import os

import torch

from reference_waves import as_json, cos_weighted_sum, wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def case(kind, layers, bidirectional, batch_first, bias, unbatched):
    I, H, T, B = 4, 3, 5, 2
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    m = cls(I, H, num_layers=layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional).double()
    with torch.no_grad():
        for j, p in enumerate(m._flat_weights):
            p.copy_(wave(p.shape, 0.1 * j + 0.3))
    D = 2 if bidirectional else 1
    x_shape = [T, I] if unbatched else ([B, T, I] if batch_first else [T, B, I])
    h_shape = [layers * D, H] if unbatched else [layers * D, B, H]
    x = wave(x_shape, 1.1).requires_grad_()
    h0 = wave(h_shape, 2.3).requires_grad_()
    c0 = wave(h_shape, 0.7).requires_grad_()
    out, state = m(x, (h0, c0) if kind == "lstm" else h0)
    hn, cn = state if kind == "lstm" else (state, None)
    loss = cos_weighted_sum(out, 0.11)
    loss = loss + cos_weighted_sum(hn, 0.23)
    if cn is not None:
        loss = loss + cos_weighted_sum(cn, 0.23)
    inputs = [x, h0] + ([c0] if kind == "lstm" else []) + list(m._flat_weights)
    grads = torch.autograd.grad(loss, inputs)
    n_state = 2 if kind == "lstm" else 1
    return {
        "kind": kind,
        "num_layers": layers,
        "bidirectional": bidirectional,
        "batch_first": batch_first,
        "has_biases": bias,
        "input": as_json(x),
        "hx": [as_json(t) for t in inputs[1 : 1 + n_state]],
        "params": [as_json(p) for p in m._flat_weights],
        "output": as_json(out),
        "h_n": as_json(hn),
        "c_n": as_json(cn) if cn is not None else None,
        "grad_input": as_json(grads[0]),
        "grad_hx": [as_json(g) for g in grads[1 : 1 + n_state]],
        "grad_params": [as_json(g) for g in grads[1 + n_state :]],
    }


def main():
    cases = []
    for kind in ("lstm", "gru"):
        cases.append(case(kind, 2, True, False, True, False))
        cases.append(case(kind, 2, True, True, True, False))
        cases.append(case(kind, 2, False, True, False, False))
        cases.append(case(kind, 1, True, False, False, False))
        cases.append(case(kind, 2, True, False, True, True))
    with open(os.path.join(ROOT, "tests", "reference", "rnn", "layers.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
