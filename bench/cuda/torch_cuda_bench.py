#!/usr/bin/env python3
"""PyTorch's side of the CUDA benchmark: the same cases as kiln_cuda_bench.cpp, the same timing
rule (warm up, calibrate a loop to ~5 ms, median of `samples` loops each closed by a device
synchronize), one JSON line per case on stdout. The case names must match kiln's exactly.

Python adds a few microseconds per call on this side: only the launch-overhead case is bound by
it (kiln's side is C++), the others queue GPU work faster than the GPU runs it."""
import json
import math
import sys
import time

import torch

N = 1 << 24
F32 = 4.0


def seconds_of(fn, iters):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def median_seconds_per_call(fn, samples):
    for _ in range(3):
        fn()
    iters = 1
    while seconds_of(fn, iters) < 0.005 and iters < (1 << 20):
        iters *= 2
    per_call = sorted(seconds_of(fn, iters) / iters for _ in range(samples))
    return per_call[len(per_call) // 2]


def randn(*sizes, dtype=torch.float32):
    return torch.randn(*sizes, device="cuda").to(dtype)


def unary(name, op):
    def prepare():
        x = randn(N)
        return lambda: op(x)

    return (name + " 16M", 2 * N * F32, 0, prepare)


def mm_case(name, n, dtype, tf32):
    def prepare():
        a, b = randn(n, n, dtype=dtype), randn(n, n, dtype=dtype)

        def run():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.mm(a, b)
            torch.backends.cuda.matmul.allow_tf32 = False

        return run

    return (name, 0, 2.0 * n * n * n, prepare)


def pair(sizes_a, sizes_b, body):
    def prepare():
        a, b = randn(*sizes_a), randn(*sizes_b)
        return lambda: body(a, b)

    return prepare


def single(sizes, body):
    def prepare():
        x = randn(*sizes)
        return lambda: body(x)

    return prepare


def add_out():
    x, y, out = randn(N), randn(N), randn(N)
    return lambda: torch.add(x, y, out=out)


def mlp():
    dims = [784, 256, 256, 10]
    params = []
    for l in range(3):
        scale = 1.0 / math.sqrt(dims[l])
        params.append((randn(dims[l + 1], dims[l]) * scale).detach().requires_grad_())
        params.append((randn(dims[l + 1]) * scale).detach().requires_grad_())
    x = randn(128, 784)
    y = torch.randint(0, 10, (128,), device="cuda")
    opt = torch.optim.SGD(params, lr=0.01)
    F = torch.nn.functional

    def step():
        h = F.linear(x, params[0], params[1]).relu()
        h = F.linear(h, params[2], params[3]).relu()
        loss = F.cross_entropy(F.linear(h, params[4], params[5]), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def layer_norm(backward):
    def prepare():
        F = torch.nn.functional
        x, w, b = randn(4096, 1024), randn(1024), randn(1024)
        if not backward:
            return lambda: F.layer_norm(x, (1024,), w, b)
        x, w, b = (t.requires_grad_() for t in (x, w, b))
        g = randn(4096, 1024)
        return lambda: torch.autograd.grad(F.layer_norm(x, (1024,), w, b), (x, w, b), g)

    return prepare


BN_ELEMS = 32 * 64 * 56 * 56


def batch_norm(backward):
    def prepare():
        F = torch.nn.functional
        x, w, b = randn(32, 64, 56, 56), randn(64), randn(64)
        rm, rv = torch.zeros(64, device="cuda"), torch.ones(64, device="cuda")
        if not backward:
            return lambda: F.batch_norm(x, rm, rv, w, b, training=True)
        x, w, b = (t.requires_grad_() for t in (x, w, b))
        g = randn(32, 64, 56, 56)
        return lambda: torch.autograd.grad(F.batch_norm(x, rm, rv, w, b, training=True), (x, w, b), g)

    return prepare


def conv2d(dtype, backward):
    def prepare():
        F = torch.nn.functional
        x, w, b = randn(16, 64, 56, 56, dtype=dtype), randn(64, 64, 3, 3, dtype=dtype), randn(64, dtype=dtype)
        if not backward:
            return lambda: F.conv2d(x, w, b, 1, 1)
        x, w, b = (t.requires_grad_() for t in (x, w, b))
        g = randn(16, 64, 56, 56, dtype=dtype)
        return lambda: torch.autograd.grad(F.conv2d(x, w, b, 1, 1), (x, w, b), g)

    return prepare


def benchmarked(prepare):
    def prepare_benchmarked():
        torch.backends.cudnn.benchmark = True
        return prepare()

    return prepare_benchmarked


CONV_FLOPS = 2.0 * 16 * 64 * 56 * 56 * 64 * 9
ATTN_FLOPS = 2.0 * 2 * 8 * 1024 * 1024 * 64 / 2


def attention(backward, dtype=torch.float32):
    def prepare():
        F = torch.nn.functional
        q, k, v = randn(8, 1024, 64, dtype=dtype), randn(8, 1024, 64, dtype=dtype), randn(8, 1024, 64, dtype=dtype)
        if not backward:
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        g = randn(8, 1024, 64, dtype=dtype)
        return lambda: torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v), g)

    return prepare


def cases():
    return [
        ("add 1 element (launch overhead)", 0, 0, pair([1], [1], lambda x, y: x + y)),
        ("add 16M", 3 * N * F32, 0, pair([N], [N], lambda x, y: x + y)),
        ("add 16M, out=", 3 * N * F32, 0, add_out),
        ("broadcast add [4096,4096]+[4096]", 2 * N * F32, 0, pair([4096, 4096], [4096], lambda x, r: x + r)),
        (
            "transposed add a.t()+b [4096,4096]",
            3 * N * F32,
            0,
            pair([4096, 4096], [4096, 4096], lambda a, b: a.t() + b),
        ),
        unary("relu", torch.relu),
        unary("exp", torch.exp),
        unary("tanh", torch.tanh),
        unary("sigmoid", torch.sigmoid),
        unary("gelu", torch.nn.functional.gelu),
        ("cast float32->bfloat16 16M", N * (F32 + 2), 0, single([N], lambda x: x.to(torch.bfloat16))),
        ("contiguous of a transpose [4096,4096]", 2 * N * F32, 0, single([4096, 4096], lambda a: a.t().contiguous())),
        ("sum 16M", N * F32, 0, single([N], lambda x: x.sum())),
        ("sum dim=1 [4096,4096]", N * F32, 0, single([4096, 4096], lambda x: x.sum(1))),
        ("sum dim=0 [4096,4096]", N * F32, 0, single([4096, 4096], lambda x: x.sum(0))),
        ("max dim=1 [4096,4096]", N * F32, 0, single([4096, 4096], lambda x: x.max(1))),
        ("softmax dim=-1 [4096,4096]", 2 * N * F32, 0, single([4096, 4096], lambda x: torch.softmax(x, -1))),
        ("cumsum dim=1 [4096,4096]", 2 * N * F32, 0, single([4096, 4096], lambda x: torch.cumsum(x, 1))),
        mm_case("mm 4096 float32", 4096, torch.float32, False),
        mm_case("mm 4096 float32, TF32", 4096, torch.float32, True),
        mm_case("mm 4096 bfloat16", 4096, torch.bfloat16, False),
        mm_case("mm 8192 bfloat16", 8192, torch.bfloat16, False),
        ("bmm [64,512,512] float32", 0, 2.0 * 64 * 512**3, pair([64, 512, 512], [64, 512, 512], torch.bmm)),
        ("layer_norm [4096,1024] fwd", 2 * 4096 * 1024 * F32, 0, layer_norm(False)),
        ("layer_norm [4096,1024] fwd+bwd", 5 * 4096 * 1024 * F32, 0, layer_norm(True)),
        ("batch_norm training [32,64,56,56] fwd", 3 * BN_ELEMS * F32, 0, batch_norm(False)),
        ("batch_norm training [32,64,56,56] fwd+bwd", 5 * BN_ELEMS * F32, 0, batch_norm(True)),
        ("conv2d [16,64,56,56] x [64,64,3,3] float32 fwd", 0, CONV_FLOPS, conv2d(torch.float32, False)),
        ("conv2d [16,64,56,56] x [64,64,3,3] float32 fwd+bwd", 0, 3 * CONV_FLOPS, conv2d(torch.float32, True)),
        ("conv2d [16,64,56,56] x [64,64,3,3] bfloat16 fwd", 0, CONV_FLOPS, conv2d(torch.bfloat16, False)),
        ("conv2d [16,64,56,56] x [64,64,3,3] bfloat16 fwd+bwd", 0, 3 * CONV_FLOPS, conv2d(torch.bfloat16, True)),
        ("causal attention [8,1024,64] float32 fwd", 0, ATTN_FLOPS, attention(False)),
        ("causal attention [8,1024,64] float32 fwd+bwd", 0, 2.5 * ATTN_FLOPS, attention(True)),
        # kiln's side calls the fused op (the tensor-core flash kernels) directly for 16-bit inputs
        ("causal attention [8,1024,64] float16 fwd", 0, ATTN_FLOPS, attention(False, torch.float16)),
        ("causal attention [8,1024,64] float16 fwd+bwd", 0, 2.5 * ATTN_FLOPS, attention(True, torch.float16)),
        ("causal attention [8,1024,64] bfloat16 fwd+bwd", 0, 2.5 * ATTN_FLOPS, attention(True, torch.bfloat16)),
        (
            "max_pool2d 3x3/2 [32,64,112,112]",
            1.25 * 32 * 64 * 112 * 112 * F32,
            0,
            single([32, 64, 112, 112], lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1)),
        ),
        ("MLP training step 784-256-256-10, batch 128", 0, 0, mlp),
        # last, as the mode stays on: cuDNN's algorithms timed once per shape
        (
            "conv2d [16,64,56,56] x [64,64,3,3] float32 fwd, cudnn.benchmark",
            0,
            CONV_FLOPS,
            benchmarked(conv2d(torch.float32, False)),
        ),
        (
            "conv2d [16,64,56,56] x [64,64,3,3] float32 fwd+bwd, cudnn.benchmark",
            0,
            3 * CONV_FLOPS,
            benchmarked(conv2d(torch.float32, True)),
        ),
        (
            "conv2d [16,64,56,56] x [64,64,3,3] bfloat16 fwd, cudnn.benchmark",
            0,
            CONV_FLOPS,
            benchmarked(conv2d(torch.bfloat16, False)),
        ),
        (
            "conv2d [16,64,56,56] x [64,64,3,3] bfloat16 fwd+bwd, cudnn.benchmark",
            0,
            3 * CONV_FLOPS,
            benchmarked(conv2d(torch.bfloat16, True)),
        ),
    ]


def main():
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False  # kiln's float32 convolutions run without TF32 too
    print(
        json.dumps(
            {
                "meta": {
                    "torch": torch.__version__,
                    "cuda": torch.version.cuda,
                    "device": torch.cuda.get_device_name(),
                    "samples": samples,
                }
            }
        ),
        flush=True,
    )
    for name, nbytes, flops, prepare in cases():
        s = median_seconds_per_call(prepare(), samples)
        print(json.dumps({"case": name, "seconds": s, "bytes": nbytes, "flops": flops}), flush=True)


if __name__ == "__main__":
    main()
