"""Deterministic inputs and JSON tensors shared by the reference writers (make_rnn_layer_references.py,
make_mha_references.py): every input is scale * sin(freq * k + phase) over the tensor's flat index k,
and each loss weighs an output by cos(freq * k), so every gradient is nontrivial."""
import torch


def wave(shape, phase, freq=0.37, scale=0.5):
    n = 1
    for s in shape:
        n *= s
    k = torch.arange(n, dtype=torch.float64)
    return (scale * torch.sin(freq * k + phase)).reshape(shape)


def cos_weighted_sum(t, freq):
    """sum(t * cos(freq * k)) over t's flat index k."""
    return (t * torch.cos(freq * torch.arange(t.numel(), dtype=torch.float64)).reshape(t.shape)).sum()


def as_json(t):
    """A tensor as the C++ tests read it: bool, uint8 or float64 data (NaN and infinities as strings)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bool:
        return {"dtype": "bool", "shape": list(t.shape), "data": [bool(v) for v in t.reshape(-1).tolist()]}
    if t.dtype == torch.uint8:
        return {"dtype": "uint8", "shape": list(t.shape), "data": [int(v) for v in t.reshape(-1).tolist()]}
    data = [
        v if v == v and abs(v) != float("inf") else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
        for v in t.reshape(-1).tolist()
    ]
    return {"dtype": "float64", "shape": list(t.shape), "data": data}
