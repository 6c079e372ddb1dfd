#!/usr/bin/env python3
"""kiln's op-coverage report and ratchet.

Merges what the build declares and compiles (<build>/generated/coverage_declared.json) with what the
last test run measured (the JSON lines the op-test driver appends to $KILN_COVERAGE_RESULTS)
into coverage/coverage.json, coverage/COVERAGE.md and coverage/coverage.html.

  --check            fail, listing every cell that passed in the baseline and no longer passes
  --update-baseline  record the currently passing cells as the new baseline
  --device-run FILE  tests/cuda_device_run.json: the CUDA cells that passed when the device suite
                     last ran on a GPU (tools/record_device_run.py). A CUDA cell this run could not
                     run stays "not run"; its detail says when and where it last passed.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coverage_render import render_html, render_markdown  # noqa: E402

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
# Gradient cells: float64 gradcheck (and gradgradcheck) for every differentiable op, and
# complex128 gradcheck (PyTorch's conjugate-Wirtinger convention) where the op declares complex128.
GRAD_DTYPES = ["float64", "complex128"]
# The checks made on the gradient dtypes: "backward" (gradcheck, reverse mode) and "jvp" (forward
# mode: J v through dual tensors against finite differences and against reverse mode's J^T u).
GRAD_CHECKS = ["backward", "jvp"]
# Several results for one cell (a test run twice, say): the worst one counts.
RANK = {"pass": 0, "unverified": 1, "fail": 2}


def cell_key(op, backend, dtype, check):
    return f"{op} {backend} {dtype} {check}"


def load_results(path):
    results = {}
    if not path or not os.path.exists(path):
        return results
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{n}: skipping a malformed line", file=sys.stderr)
                continue
            key = cell_key(r["op"], r["backend"], r["dtype"], r["check"])
            old = results.get(key)
            if old is None or RANK.get(r["status"], 2) > RANK.get(old["status"], 2):
                results[key] = r
    return results


def cell(declared, compiled, result, not_run_detail="compiled, not run in the last test run"):
    """One report cell: its status word and the detail behind it."""
    if result is not None:
        return {"status": result["status"], "detail": result.get("detail", "")}
    if compiled:
        return {"status": "not run", "detail": not_run_detail}
    if declared:
        return {"status": "declared", "detail": "declared in ops/*.yaml, not compiled in this build"}
    return None


def not_run_details(build_info):
    """Why a compiled cell of each backend has no result: CUDA cells are compiled for the build's
    architectures and only run where a device is present."""
    archs = ", ".join(f"sm_{a}" for a in str(build_info.get("cuda_architectures", "")).split(";") if a)
    return {"cuda": f"compiled ({archs}), not run: the last test run had no CUDA device"}


def device_run_note(device_run):
    return f"passed on {device_run['device']} on {device_run['date']}"


def with_device_run(c, key, device_run):
    """A CUDA cell this run did not run, with the device run's word on it when it passed there."""
    if c and c["status"] == "not run" and device_run and key in device_run["passed"]:
        return {"status": "not run", "detail": f"{c['detail']}; {device_run_note(device_run)}"}
    return c


def grad_cells(name, backend, check, declared, compiled, results, device_run, extra):
    """{gradient dtype: cell} of one check: float64 and complex128, each where the backend declares it."""
    cells = {}
    for dtype in GRAD_DTYPES:
        key = cell_key(name, backend, dtype, check)
        c = with_device_run(cell(dtype in declared, dtype in compiled, results.get(key), **extra), key, device_run)
        if c:
            cells[dtype] = c
    return cells


def merge(declared_doc, results, build_info=None, device_run=None):
    """build_info (build/build_info.json): what this build compiled; without it every declared
    kernel counts as compiled. device_run: tests/cuda_device_run.json, its cells as a set."""
    details = not_run_details(build_info or {})
    ops = []
    backends = sorted({b for op in declared_doc["ops"] for b in op.get("backends", {})}, key=lambda b: (b != "cpu", b))
    for op in declared_doc["ops"]:
        row = {k: op.get(k) for k in ("name", "family", "doc", "kind", "differentiable")}
        row["autocast"] = op.get("autocast") or {}  # backend -> cast policy under autocast
        # How the op pushes tangents (forward-mode AD); a declared file older than forward AD has none.
        row["jvp_mode"] = op.get("jvp", "none")
        row["forward"] = {}
        # what serves it per backend (its dispatch: target), as the registry names it
        row["served_by"] = {b: v.get("target", "") for b, v in op.get("backends", {}).items()}
        row.update({check: {} for check in GRAD_CHECKS})
        # Forward-AD cells for every mode but "none": an "unsupported" op keeps them (they fail or stay
        # declared), which shows the gap instead of hiding it.
        grad_checks = ["backward"] + (["jvp"] if row["jvp_mode"] != "none" else [])
        for backend in backends:
            b = op.get("backends", {}).get(backend, {"declared": [], "compiled": []})
            declared, compiled = set(b.get("declared", [])), set(b.get("compiled", []))
            if backend == "cuda" and build_info is not None and not build_info.get("cuda_built"):
                compiled = set()
            extra = {"not_run_detail": details[backend]} if backend in details else {}
            cells = {}
            for dtype in DTYPES:
                key = cell_key(op["name"], backend, dtype, "forward")
                c = with_device_run(
                    cell(dtype in declared, dtype in compiled, results.get(key), **extra), key, device_run
                )
                if c:
                    cells[dtype] = c
            row["forward"][backend] = cells
            if op.get("differentiable"):
                for check in grad_checks:
                    row[check][backend] = grad_cells(
                        op["name"], backend, check, declared, compiled, results, device_run, extra
                    )
        ops.append(row)
    return backends, ops


def totals(backends, ops):
    """Counts per row: "<backend> forward" (every dtype), and "<backend> backward <dtype>" and
    "<backend> jvp <dtype>" for each gradient dtype (float64 and complex128 apart)."""
    out = {}
    for backend in backends:
        for check, dtypes in (("forward", None), *((c, [d]) for c in GRAD_CHECKS for d in GRAD_DTYPES)):
            counts = {"declared": 0, "compiled": 0, "pass": 0, "fail": 0, "unverified": 0, "not run": 0}
            for op in ops:
                cells = (op.get(check) or {}).get(backend) or {}
                for dtype, c in cells.items():
                    if dtypes is not None and dtype not in dtypes:
                        continue
                    counts["declared"] += 1
                    if c["status"] != "declared":
                        counts["compiled"] += 1
                    if c["status"] in counts and c["status"] not in ("declared", "compiled"):
                        counts[c["status"]] += 1
            out[f"{backend} {check}" + (f" {dtypes[0]}" if dtypes else "")] = counts
    return out


def passing_cells(ops):
    keys = []
    for op in ops:
        for check in ("forward", *GRAD_CHECKS):
            for backend, cells in (op.get(check) or {}).items():
                keys += [
                    cell_key(op["name"], backend, d, check) for d, c in (cells or {}).items() if c["status"] == "pass"
                ]
    return sorted(keys)


def status_of(ops, key):
    name, backend, dtype, check = key.split(" ")
    for op in ops:
        if op["name"] == name:
            c = ((op.get(check) or {}).get(backend) or {}).get(dtype)
            return (c["status"], c.get("detail", "")) if c else ("vanished", "no longer declared")
    return "vanished", "op no longer in ops/*.yaml"


def check_ratchet(ops, baseline_path):
    if not os.path.exists(baseline_path):
        print(f"coverage ratchet: no baseline at {baseline_path}; record one with `tools/kiln baseline`")
        return 1
    with open(baseline_path, encoding="utf-8") as f:
        baseline = set(json.load(f)["cells"])
    now = set(passing_cells(ops))
    lost = sorted(baseline - now)
    gained = now - baseline
    for key in lost:
        status, detail = status_of(ops, key)
        print(f"coverage ratchet: {key}: passed in the baseline, now {status}" + (f" ({detail})" if detail else ""))
    if lost:
        print(
            f"coverage ratchet: {len(lost)} cell(s) stopped passing. Fix them, or if the loss is deliberate "
            "run `tools/kiln baseline` and commit tests/coverage_baseline.json."
        )
        return 1
    print(
        f"coverage ratchet: all {len(baseline)} baseline cells pass"
        + (f"; {len(gained)} more pass now (`tools/kiln baseline` records them)" if gained else "")
    )
    return 0


def shown_path(path):
    """A path as the report shows it: relative to the repository, or its last two parts (a
    build directory elsewhere), never the absolute path of the machine that ran the tests."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = os.path.relpath(os.path.abspath(path), root)
    if not rel.startswith(".."):
        return rel
    return os.path.join(os.path.basename(os.path.dirname(os.path.abspath(path))), os.path.basename(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--declared", required=True, help="<build>/generated/coverage_declared.json")
    ap.add_argument("--results", required=True, help="JSON lines from the last test run")
    ap.add_argument("--baseline", required=True, help="tests/coverage_baseline.json")
    ap.add_argument("--out", required=True, help="directory for coverage.json, COVERAGE.md, coverage.html")
    ap.add_argument("--build-info", help="build/build_info.json: which backends this build compiled")
    ap.add_argument("--device-run", help="tests/cuda_device_run.json: CUDA cells that passed on a GPU earlier")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--update-baseline", action="store_true")
    args = ap.parse_args()

    with open(args.declared, encoding="utf-8") as f:
        declared = json.load(f)
    results = load_results(args.results)
    build_info = None
    if args.build_info and os.path.exists(args.build_info):
        with open(args.build_info, encoding="utf-8") as f:
            build_info = json.load(f)
    device_run = None
    if args.device_run and os.path.exists(args.device_run):
        with open(args.device_run, encoding="utf-8") as f:
            device_run = json.load(f)
        device_run["passed"] = set(device_run["cells"])
    backends, ops = merge(declared, results, build_info, device_run)
    when = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(args.results)))
        if os.path.exists(args.results)
        else None
    )
    report = {
        "results_file": shown_path(args.results),
        "results_time": when,
        "backends": backends,
        "dtypes": DTYPES,
        "grad_dtypes": GRAD_DTYPES,
        "totals": totals(backends, ops),
        "ops": ops,
    }
    if device_run:
        report["device_run"] = {k: device_run[k] for k in ("device", "date", "suite", "source")}
        report["device_run"]["cells"] = len(device_run["passed"])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "coverage.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "COVERAGE.md"), "w", encoding="utf-8") as f:
        f.write(render_markdown(report))
    with open(os.path.join(args.out, "coverage.html"), "w", encoding="utf-8") as f:
        f.write(render_html(report))

    rc = 0
    if args.update_baseline:
        if not results:
            print(f"coverage: no results in {args.results}; run `tools/kiln test` first")
            return 1
        cells = passing_cells(ops)
        with open(args.baseline, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "comment": "Cells that passed; tools/kiln test fails when one stops passing. "
                    "Rewritten by `tools/kiln baseline`.",
                    "cells": cells,
                },
                f,
                indent=0,
            )
            f.write("\n")
        print(f"coverage: baseline {args.baseline} now holds {len(cells)} passing cells")
    if args.check:
        rc = check_ratchet(ops, args.baseline)
    return rc


if __name__ == "__main__":
    sys.exit(main())
