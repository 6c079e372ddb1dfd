#!/usr/bin/env python3
"""Measures kiln's build on this machine and writes the figures as JSON.

In a scratch copy of the source tree (so the working tree and its build are never touched):
  codegen   the generator over the whole registry into an empty folder (median of 3 runs)
  clean     configure + build of the library, tests and demo with the given jobs
  rebuild   the same build after editing one pointwise op's expression in ops/pointwise_unary.yaml
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# One pointwise expression and an equivalent edit that changes its generated kernel.
EDIT_FROM = "  pointwise: self - trunc(self)\n"
EDIT_TO = "  pointwise: self - trunc(self) + 0\n"


def timed(cmd, cwd):
    start = time.monotonic()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return time.monotonic() - start


def copy_tree(dest):
    ignore = shutil.ignore_patterns(".git", "build*", "generated", "coverage", "__pycache__")
    shutil.copytree(ROOT, dest, ignore=ignore)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--codegen-only", action="store_true", help="skip the clean build and the rebuild")
    args = ap.parse_args()

    result = {"jobs": args.jobs}
    with tempfile.TemporaryDirectory(prefix="kiln-buildtime-") as tmp:
        src = Path(tmp) / "kiln"
        copy_tree(src)
        gen = [sys.executable, "codegen/gen.py", "--ops", "ops", "--root", ".", "--out"]
        runs = []
        for i in range(3):
            runs.append(timed(gen + [str(Path(tmp) / f"gen{i}")], src))
        result["codegen_s"] = statistics.median(runs)
        print(f"codegen of the whole registry: {result['codegen_s']:.2f} s", flush=True)
        if not args.codegen_only:
            build = src / "build"
            configure = ["cmake", "-S", ".", "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                         "-DKILN_CUDA=OFF"]
            make = ["cmake", "--build", str(build), "-j", str(args.jobs)]
            result["clean_build_s"] = timed(configure, src) + timed(make, src)
            print(f"clean build (library, tests, demo; -j{args.jobs}): {result['clean_build_s']:.1f} s", flush=True)
            ops = src / "ops" / "pointwise_unary.yaml"
            text = ops.read_text()
            if EDIT_FROM not in text:
                sys.exit("measure_build: the expression to edit is no longer in ops/pointwise_unary.yaml; update EDIT_FROM")
            ops.write_text(text.replace(EDIT_FROM, EDIT_TO, 1))
            result["rebuild_one_op_s"] = timed(make, src)
            result["edited_expression"] = EDIT_TO.strip()
            print(f"rebuild after editing one pointwise op: {result['rebuild_one_op_s']:.1f} s", flush=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
