#!/usr/bin/env python3
"""Pairs kiln_cuda_bench's and torch_cuda_bench.py's JSON lines by case name and prints a
Markdown page (BENCHMARKS-CUDA.md is one): both medians, the speedup (PyTorch's time over
kiln's: above 1, kiln is faster), and the achieved GB/s or TFLOP/s of each side.

    compare.py KILN.jsonl TORCH.jsonl
"""
import argparse
import datetime
import json


def load(path):
    rows, meta = {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                row = json.loads(line)
                if "meta" in row:
                    meta = row["meta"]
                else:
                    rows[row["case"]] = row
    return rows, meta


def duration(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    return f"{s * 1e3:.2f} ms"


def rate(row):
    if row["flops"]:
        return f"{row['flops'] / row['seconds'] / 1e12:.0f} TFLOP/s"
    if row["bytes"]:
        return f"{row['bytes'] / row['seconds'] / 1e9:.0f} GB/s"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kiln")
    ap.add_argument("torch")
    args = ap.parse_args()
    kiln, _ = load(args.kiln)
    torch, meta = load(args.torch)
    print("# kiln vs PyTorch on CUDA\n")
    print(
        f"Written by `bench/cuda/run.sh` on {datetime.date.today()}: {meta.get('device', 'a CUDA device')}, "
        f"PyTorch {meta.get('torch', '?')} (CUDA {meta.get('cuda', '?')}) on the same GPU right after kiln. "
        "libtorch with CUDA is not in Debian, so the two sides are two processes (kiln_cuda_bench, "
        "torch_cuda_bench.py) with one timing rule: warm up, calibrate a loop of calls to about 5 ms, "
        f"then the median of {meta.get('samples', '?')} loops, each closed by a device synchronize. "
        "**Speedup** is PyTorch's time over kiln's (above 1: kiln is faster). The launch-overhead case "
        "includes Python's per-call cost on PyTorch's side; the others queue GPU work faster than the "
        "GPU runs it. float32 products run without TF32 unless the case says so, on both sides.\n"
    )
    print("| case | kiln | PyTorch | speedup | kiln rate | PyTorch rate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, k in kiln.items():
        t = torch.get(name)
        if t is None:
            print(f"| {name} | {duration(k['seconds'])} | (no case) | | {rate(k)} | |")
            continue
        speedup = t["seconds"] / k["seconds"]
        print(
            f"| {name} | {duration(k['seconds'])} | {duration(t['seconds'])} | **{speedup:.2f}×** | "
            f"{rate(k)} | {rate(t)} |"
        )
    for name in torch:
        if name not in kiln:
            print(f"| {name} | (no case) | {duration(torch[name]['seconds'])} | | | {rate(torch[name])} |")


if __name__ == "__main__":
    main()
