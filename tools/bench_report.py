#!/usr/bin/env python3
"""Writes BENCHMARKS.md from kiln_bench's JSON results and tools/measure_build.py's figures.

Each target of the CPU-speed issue is checked against the measured numbers; a missed target is
reported with its shortfall and the explanation kept under its id in bench/notes.md.
"""
import argparse
import datetime
import json
import platform
import re
import subprocess
from pathlib import Path

POINTWISE_ALLOC = ["add 16M", "mul by scalar 16M", "exp 16M", "tanh 16M", "sigmoid 16M", "gelu 16M", "relu 16M"]
TRANSCENDENTAL = [f"{op} 16M" for op in ("exp", "tanh", "sigmoid", "gelu")]
MATMULS = ["matmul float32 512", "matmul float32 1024", "matmul float32 2048", "matmul float64 1024"]

# id, what the issue asks, the cases it applies to, the metric and its floor (2 threads).
TARGETS = [
    (
        "tiny_op",
        "tiny-op overhead at most 1/4 of libtorch's time",
        ["tiny add (1 element)", "tiny add, autograd recording"],
        "speedup",
        4.0,
    ),
    ("pointwise_alloc", "allocating pointwise ops at least 2x libtorch", POINTWISE_ALLOC, "speedup", 2.0),
    (
        "bandwidth",
        "allocating add and mul at least 80% of measured memory bandwidth",
        ["add 16M", "mul by scalar 16M"],
        "bandwidth_fraction",
        0.8,
    ),
    ("transcendental", "allocating exp, tanh, sigmoid, gelu at least 1.5x libtorch", TRANSCENDENTAL, "speedup", 1.5),
    ("transposed_add", "transposed add at least 3x libtorch", ["transposed add a.t()+b [4096,4096]"], "speedup", 3.0),
    (
        "reductions",
        "sum, max, mean at least 1.0x libtorch",
        [
            "sum all [4096,4096]",
            "sum last dim [4096,4096]",
            "sum dim 0 [4096,4096]",
            "max all [4096,4096]",
            "mean all [4096,4096]",
        ],
        "speedup",
        1.0,
    ),
    ("argmax", "argmax at least 2x libtorch", ["argmax last dim [4096,4096]"], "speedup", 2.0),
    (
        "softmax_cumsum",
        "softmax, log_softmax, cumsum at least 1.2x libtorch",
        ["softmax last dim [4096,1024]", "log_softmax last dim [4096,1024]", "cumsum last dim [4096,1024]"],
        "speedup",
        1.2,
    ),
    ("matmul_blas", "matmul at least 0.9x of calling OpenBLAS directly", MATMULS, "blas_fraction", 0.9),
    ("matmul_torch", "matmul at least 1.2x libtorch", MATMULS, "speedup", 1.2),
    ("bmm", "bmm at least 1.5x libtorch", ["bmm [64,128,128]"], "speedup", 1.5),
    (
        "mlp",
        "MLP training step at least 1.5x libtorch",
        ["MLP training step 784-256-256-10, batch 128"],
        "speedup",
        1.5,
    ),
    (
        "mlp_steady",
        "MLP training step steady at 2 threads (no round slower than 2x the fastest, " "nor than 2x the 1-thread step)",
        ["MLP training step 784-256-256-10, batch 128"],
        "steadiness",
        0.5,
    ),
]
BUILD_TARGETS = [
    ("clean_build", "clean CPU build at most 4 minutes on 2 cores", "clean_build_s", 240.0),
    ("rebuild", "rebuild after editing one pointwise op's expression at most 5 s", "rebuild_one_op_s", 5.0),
    ("add_pointwise_op", "rebuild after adding a pointwise op at most 20 s", "add_pointwise_op_s", 20.0),
    (
        "add_kernel_op",
        "rebuild after adding a kernel op at most 30 s (excluding the op's own files)",
        "add_kernel_op_excluding_own_s",
        30.0,
    ),
    ("codegen", "codegen of the whole registry at most 2 s", "codegen_s", 2.0),
]


def build_breakdown(build):
    """What each measured rebuild compiled, by part of the build (tools/measure_build.py's groups)."""
    rows = [
        ("edit one pointwise expression", "rebuild_one_op"),
        ("add a pointwise op", "add_pointwise_op"),
        ("add a kernel op", "add_kernel_op"),
        ("add a pointwise op with a method", "add_method_op"),
        ("CUDA kernels after adding a pointwise op", "cuda_add_pointwise_op"),
    ]
    out = []
    for label, key in rows:
        groups = build.get(f"{key}_objects_by_group")
        if groups is None:
            continue
        if not out:
            out += ["| rebuild | seconds | objects | what they are |", "| --- | ---: | ---: | --- |"]
        parts = ", ".join(f"{name} {n}" for name, n in groups.items())
        out.append(f"| {label} | {build[key + '_s']:.1f} | {build[key + '_objects']} | {parts} |")
    return out + [""] if out else []


def fmt_time(s):
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    return f"{s * 1e3:.2f} ms"


def derived(c, machine):
    if "kiln_gbs" in c:
        return (
            f"{c['kiln_gbs']:.1f} GB/s ({100 * c['bandwidth_fraction']:.0f}% of STREAM); libtorch {c['torch_gbs']:.1f}"
        )
    if "blas_fraction" in c:
        return (
            f"{c['kiln_gflops']:.1f} GFLOP/s ({c['blas_fraction']:.2f} of OpenBLAS); "
            f"libtorch {c['torch_blas_fraction']:.2f}"
        )
    if "kiln_gflops" in c:
        return f"{c['kiln_gflops']:.1f} GFLOP/s; libtorch {c['torch_gflops']:.1f}"
    return ""


def metric(c, name, by_key):
    if name == "steadiness":
        rounds = c["kiln_rounds_s"]
        one_thread = by_key.get((c["name"], 1))
        ratio = min(rounds) / max(rounds)
        if one_thread:
            ratio = min(ratio, one_thread["kiln_s"] / max(rounds))
        return ratio
    return c.get(name)


def load_notes(path):
    """Sections of bench/notes.md keyed by their '## id' heading."""
    notes, key = {}, None
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            m = re.match(r"^## (\S+)\s*$", line)
            if m:
                key = m.group(1)
                notes[key] = []
            elif key:
                notes[key].append(line)
    return {k: "\n".join(v).strip() for k, v in notes.items()}


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def torch_version():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libtorch-dev"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--build-times")
    ap.add_argument("--notes")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    res = json.loads(Path(args.results).read_text())
    build = (
        json.loads(Path(args.build_times).read_text()) if args.build_times and Path(args.build_times).exists() else {}
    )
    notes = load_notes(args.notes)
    by_key = {(c["name"], c["threads"]): c for c in res["cases"]}
    threads = sorted({c["threads"] for c in res["cases"]})

    out = ["# kiln vs libtorch on CPU", ""]
    out.append(
        f"Written by `tools/kiln bench{' --quick' if res.get('quick') else ''}` on "
        f"{datetime.date.today().isoformat()}: {cpu_model()}, {len(threads) and max(threads)} threads max, "
        f"libtorch {torch_version()} (Debian) in the same process. Each case alternates kiln and libtorch "
        f"(A B A B ...) after a warm-up, for at least {res['min_time_s']} s per side per round; a round gives "
        f"the two medians and their ratio, and {res['rounds']} rounds give the spread. **Speedup** is "
        f"libtorch's time over kiln's (above 1: kiln is faster); the spread is the lowest and highest "
        f"round. Trust a difference only when its whole spread is on one side of 1."
    )
    out.append("")
    out.append(
        f"BLAS in the process: `cblas_sgemm` from `{res['blas']['cblas_sgemm']}`, `sgemm_` (libtorch's "
        f"entry) from `{res['blas']['sgemm_']}`."
    )
    out.append("")
    out.append("## The machine, measured in the same run")
    out.append("")
    out.append(
        "| threads | memory bandwidth (STREAM add) | OpenBLAS sgemm 512 / 1024 / 2048 | dgemm 1024 | 64 × sgemm 128 |"
    )
    out.append("| --- | --- | --- | --- | --- |")
    for t in threads:
        m = res["machine"][str(t)]
        g = m["gemm_gflops"]
        out.append(
            f"| {t} | {m['stream_add_gbs']:.1f} GB/s | {g['sgemm512']:.0f} / {g['sgemm1024']:.0f} / "
            f"{g['sgemm2048']:.0f} GFLOP/s | {g['dgemm1024']:.0f} GFLOP/s | {g['sgemm128x64']:.0f} GFLOP/s |"
        )
    out.append("")
    for t in threads:
        out.append(f"## {t} thread{'s' if t > 1 else ''}")
        out.append("")
        out.append("| case | kiln | libtorch | speedup | spread | derived |")
        out.append("| --- | ---: | ---: | ---: | --- | --- |")
        for c in res["cases"]:
            if c["threads"] != t:
                continue
            out.append(
                f"| {c['name']} | {fmt_time(c['kiln_s'])} | {fmt_time(c['torch_s'])} | "
                f"**{c['speedup']:.2f}×** | {c['speedup_min']:.2f}–{c['speedup_max']:.2f} | "
                f"{derived(c, res['machine'][str(t)])} |"
            )
        out.append("")

    out.append("## Targets (2 threads)")
    out.append("")
    out.append("| target | case | needed | measured (spread) | |")
    out.append("| --- | --- | ---: | --- | --- |")
    missed = {}
    for tid, text, cases, name, floor in TARGETS:
        for case in cases:
            c = by_key.get((case, 2))
            if c is None:
                continue
            v = metric(c, name, by_key)
            ok = v is not None and v >= floor
            if name == "speedup":
                shown, need = f"{v:.2f}× ({c['speedup_min']:.2f}–{c['speedup_max']:.2f})", f"{floor:g}×"
            elif name == "steadiness":
                shown, need = f"{v:.2f} (fastest round, or the 1-thread step, over the slowest round)", f"≥ {floor:g}"
            else:
                shown, need = f"{100 * v:.0f}%", f"{100 * floor:.0f}%"
            out.append(f"| {text} | {case} | {need} | {shown} | {'met' if ok else '**missed**'} |")
            if not ok:
                missed.setdefault(tid, []).append(f"{case}: {shown} against {need}")
    for tid, text, key, limit in BUILD_TARGETS:
        if key not in build:
            out.append(f"| {text} | | {limit:g} s | not measured (quick run) | |")
            continue
        ok = build[key] <= limit
        out.append(f"| {text} | | ≤ {limit:g} s | {build[key]:.1f} s | {'met' if ok else '**missed**'} |")
        if not ok:
            missed.setdefault(tid, []).append(f"{build[key]:.1f} s against {limit:g} s")
    out.append("")
    if build:
        out.append(
            f"Build figures from a scratch copy of the tree with -j{build['jobs']}: codegen "
            f"{build['codegen_s']:.2f} s"
            + (
                f", clean build of library + tests + demo {build['clean_build_s']:.0f} s, rebuild after "
                f"editing one op (`{build['edited_expression']}`) {build['rebuild_one_op_s']:.1f} s "
                f"({build.get('rebuild_one_op_objects', '?')} objects)"
                if "clean_build_s" in build
                else ""
            )
            + (
                f", after adding a pointwise op {build['add_pointwise_op_s']:.1f} s "
                f"({build['add_pointwise_op_objects']} objects), after adding a kernel op "
                f"{build['add_kernel_op_s']:.1f} s ({build['add_kernel_op_objects']} objects; its own file "
                f"{build['add_kernel_op_own_files_s']:.1f} s of compile time)"
                if "add_pointwise_op_s" in build
                else ""
            )
            + (
                f", after adding a pointwise op with a method and an in-place form (a change to class "
                f"Tensor) {build['add_method_op_s']:.1f} s ({build['add_method_op_objects']} objects)"
                if "add_method_op_s" in build
                else ""
            )
            + (
                f". The CUDA kernels of a clean CUDA build take {build['cuda_kernels_s']:.0f} s "
                f"({100 * build['cuda_share']:.0f}% of that build), {build['cuda_s_per_pointwise_op']:.1f} s "
                f"of nvcc per generated pointwise op ({build['cuda_pointwise_ops']} ops)"
                if "cuda_kernels_s" in build
                else ""
            )
            + "."
        )
        out.append("")
        out += build_breakdown(build)

    out.append("## Missed targets")
    out.append("")
    if not missed:
        out.append("None in this run.")
    for tid, lines in missed.items():
        out.append(f"### {tid}")
        out.append("")
        for line in lines:
            out.append(f"- {line}")
        out.append("")
        out.append(notes.get(tid, "_No explanation recorded in bench/notes.md for this target._"))
        out.append("")
    if notes.get("general"):
        out.append("## Notes")
        out.append("")
        out.append(notes["general"])
        out.append("")
    Path(args.out).write_text("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
