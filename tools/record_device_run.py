#!/usr/bin/env python3
"""Records what the CUDA device suite passed on a GPU, for the coverage report of machines
without one (tools/coverage.py --device-run).

    record_device_run.py RESULTS.jsonl --device "NVIDIA H200" --suite "577/577 test cases passed" \\
        --source "the tree of commit abc1234" [--date 2026-11-26] [--out tests/cuda_device_run.json]

RESULTS.jsonl: the coverage lines kiln_cuda_tests appended to $KILN_COVERAGE_RESULTS on the GPU
machine. Only CUDA cells that passed (and no cell that also failed) are kept.
"""
import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coverage import cell_key, load_results  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--device", required=True)
    ap.add_argument("--suite", required=True, help="the suite's summary, e.g. '577/577 test cases passed'")
    ap.add_argument("--source", required=True, help="what was built, e.g. 'the tree of commit abc1234'")
    ap.add_argument("--date", default=str(datetime.date.today()))
    ap.add_argument(
        "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cuda_device_run.json")
    )
    args = ap.parse_args()
    results = load_results(args.results)  # the worst result of a cell counts
    cells = sorted(k for k, r in results.items() if r["backend"] == "cuda" and r["status"] == "pass")
    if not cells:
        sys.exit(f"record_device_run: no passing CUDA cells in {args.results}")
    doc = {
        "comment": "CUDA cells that passed when the device suite last ran on a GPU; "
        "written by tools/record_device_run.py, read by tools/coverage.py --device-run.",
        "device": args.device,
        "date": args.date,
        "suite": args.suite,
        "source": args.source,
        "cells": cells,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=0)
        f.write("\n")
    print(f"record_device_run: {len(cells)} CUDA cells from {args.device} written to {os.path.normpath(args.out)}")


if __name__ == "__main__":
    main()
