#!/usr/bin/env python3
"""Measures kiln's build on this machine and writes the figures as JSON.

In a scratch copy of the source tree (so the working tree and its build are never touched):
  codegen            the generator over the whole registry into an empty folder (median of 3 runs)
  clean              configure + build of the library, tests and demo, CPU only, with the given jobs
  edit expression    the same build after editing one pointwise op's expression
  add pointwise op   ... after adding a pointwise op to ops/pointwise_unary.yaml (default
                     variants: kiln::name and name_out, as PyTorch's default)
  add kernel op      ... after adding a structured kernel op (an along_dim scan) and its kernel
                     file; the new file's own compile time is reported apart and excluded
  add method op      ... after adding a pointwise op with a method and an in-place form
                     (x.name(), x.name_()): a change to class Tensor, which every user recompiles
  cuda share         the CUDA kernels of a clean CUDA build (target kiln_cuda_kernels), when nvcc
                     is found, their nvcc seconds per generated pointwise op, and the CUDA kernels
                     an added pointwise op recompiles
Each rebuild also records how many objects it compiled, from ninja's log, by part of the build,
and the seconds of the library alone (target kiln, built first) apart from the whole.
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
NEW_POINTWISE_OP = """
- signature: measure_build_probe(Tensor self) -> Tensor
  dtypes: [floating]
  pointwise: self * 2 + 1
  derivatives:
    self: grad * 2
  doc: A probe op added by tools/measure_build.py.
"""
NEW_METHOD_OP = """
- signature: measure_build_method(Tensor self) -> Tensor
  variants: [function, method, inplace, out]
  dtypes: [floating]
  pointwise: self * 3 + 1
  derivatives:
    self: grad * 3
  doc: A probe op with a method added by tools/measure_build.py.
"""
NEW_KERNEL_OP = """
- signature: measure_build_scan(Tensor self, int dim) -> Tensor
  family: reduction
  dtypes: [floating]
  dispatch: {cpu: measure_build_scan}
  meta: along_dim
  samples:
    - {self: [3, 5], dim: 1}
  doc: A probe kernel op added by tools/measure_build.py.
"""
NEW_KERNEL_FILE = """// A probe kernel added by tools/measure_build.py.
#include "kiln/gen/kernels/cpu/measure_build_scan.h"

namespace kiln::cpu {

void measure_build_scan(const meta::AlongDimPlan& /*plan*/, const TensorBase& out, const TensorBase& self) {
  out.copy_(self);
}

}  // namespace kiln::cpu
"""


def timed(cmd, cwd):
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"measure_build: {' '.join(cmd)} failed:\n{done.stdout[-4000:]}")
    return time.monotonic() - start


def copy_tree(dest):
    # generated/: a tree from before it moved into the build folders
    ignore = shutil.ignore_patterns(".git", "build*", "generated", "coverage", "__pycache__")
    shutil.copytree(ROOT, dest, ignore=ignore)


def ninja_entries(build):
    """(output, seconds) of every entry of .ninja_log, in order."""
    log = build / ".ninja_log"
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        if line.startswith("#"):
            continue
        start, end, _, target, _ = line.split("\t")
        out.append((target, (int(end) - int(start)) / 1000.0))
    return out


# What an object is, from its path: the parts of the build a rebuild touched.
GROUPS = (
    ("generated/src/ops/", "op entries"),
    ("generated/src/cpu/", "cpu pointwise kernels"),
    ("generated/src/cuda/", "cuda pointwise kernels"),
    ("generated/src/", "registry"),
    ("generated/tests/", "generated tests"),
    ("kernels/cpu/", "cpu kernels"),
    ("kernels/cuda/", "cuda kernels"),
    ("runtime/src/", "runtime"),
    ("tests/", "tests"),
    ("cmake_pch", "precompiled headers"),
)


def object_group(target):
    for marker, name in GROUPS:
        if marker in target:
            return name
    return "other"


def object_stamps(build):
    """{object file: modification time} of every object under the build directory."""
    return {str(p.relative_to(build)): p.stat().st_mtime_ns for p in build.rglob("*.o")}


def rebuild(make, src, build, label, result, key, own=None):
    """Times a rebuild; records the objects it compiled and (own) the seconds of the new files."""
    # Objects whose file changed, not the tail of .ninja_log: ninja may recompact its log.
    before = object_stamps(build)
    # The library first (what a contributor adding an op rebuilds to call it), then the rest
    # (test suites, demo), which use the public API and recompile whenever a method is added.
    library_s = timed(make + ["--target", "kiln"], src) if "--target" not in make else None
    seconds = timed(make, src) + (library_s or 0.0)
    after = object_stamps(build)
    durations = dict(ninja_entries(build))  # the last entry of each output
    compiled = [(t, durations.get(t, 0.0)) for t, stamp in after.items() if before.get(t) != stamp]
    result[key] = seconds
    result[key.replace("_s", "_objects")] = len(compiled)
    groups = {}
    for target, _ in compiled:
        groups[object_group(target)] = groups.get(object_group(target), 0) + 1
    result[key.replace("_s", "_objects_by_group")] = dict(sorted(groups.items()))
    parts = ", ".join(f"{g} {n}" for g, n in sorted(groups.items()))
    text = f"{label}: {seconds:.1f} s, {len(compiled)} objects compiled ({parts})"
    if library_s is not None:
        result[key.replace("_s", "_library_s")] = library_s
        text += f"; the library alone {library_s:.1f} s"
    if own:
        own_s = sum(s for t, s in compiled if any(o in t for o in own))
        result[key.replace("_s", "_own_files_s")] = own_s
        result[key.replace("_s", "_excluding_own_s")] = max(seconds - own_s / 2, 0.0)  # -j2: two compile at once
        text += f" (its own files {own_s:.1f} s of compile time)"
    print(text, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--codegen-only", action="store_true", help="skip the builds")
    ap.add_argument("--no-cuda", action="store_true", help="skip the CUDA share even when nvcc is found")
    args = ap.parse_args()

    result = {"jobs": args.jobs}
    with tempfile.TemporaryDirectory(prefix="kiln-buildtime-") as tmp:
        src = Path(tmp) / "kiln"
        copy_tree(src)
        gen = [sys.executable, "codegen/gen.py", "--registry", "ops.yaml", "--out"]
        runs = []
        for i in range(3):
            runs.append(timed(gen + [str(Path(tmp) / f"gen{i}")], src))
        result["codegen_s"] = statistics.median(runs)
        print(f"codegen of the whole registry: {result['codegen_s']:.2f} s", flush=True)
        if args.codegen_only:
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
            return
        build = src / "build"
        configure = [
            "cmake",
            "-S",
            ".",
            "-B",
            str(build),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DKILN_CUDA=OFF",
        ]
        make = ["cmake", "--build", str(build), "-j", str(args.jobs)]
        result["clean_build_s"] = timed(configure, src) + timed(make, src)
        print(f"clean build (library, tests, demo; -j{args.jobs}): {result['clean_build_s']:.1f} s", flush=True)

        unary = src / "ops" / "pointwise_unary.yaml"
        text = unary.read_text()
        if EDIT_FROM not in text:
            sys.exit("measure_build: the expression to edit is no longer in ops/pointwise_unary.yaml; update EDIT_FROM")
        unary.write_text(text.replace(EDIT_FROM, EDIT_TO, 1))
        result["edited_expression"] = EDIT_TO.strip()
        rebuild(make, src, build, "rebuild after editing one pointwise op", result, "rebuild_one_op_s")

        unary.write_text(unary.read_text() + NEW_POINTWISE_OP)
        rebuild(
            make,
            src,
            build,
            "rebuild after adding a pointwise op",
            result,
            "add_pointwise_op_s",
            own=["measure_build_probe"],
        )

        (src / "ops" / "reductions.yaml").write_text((src / "ops" / "reductions.yaml").read_text() + NEW_KERNEL_OP)
        (src / "kernels" / "cpu" / "measure_build_scan.cpp").write_text(NEW_KERNEL_FILE)
        subprocess.run(configure, cwd=src, check=True, stdout=subprocess.DEVNULL)  # the new kernel file
        rebuild(
            make, src, build, "rebuild after adding a kernel op", result, "add_kernel_op_s", own=["measure_build_scan"]
        )

        unary.write_text(unary.read_text() + NEW_METHOD_OP)
        rebuild(
            make,
            src,
            build,
            "rebuild after adding a pointwise op with a method",
            result,
            "add_method_op_s",
            own=["measure_build_method"],
        )

        if not args.no_cuda and shutil.which("nvcc"):
            cuda_src = Path(tmp) / "kiln-cuda"
            copy_tree(cuda_src)
            cuda_build = cuda_src / "build"
            subprocess.run(
                [
                    "cmake",
                    "-S",
                    ".",
                    "-B",
                    str(cuda_build),
                    "-G",
                    "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DKILN_CUDA=ON",
                ],
                cwd=cuda_src,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            # the core first (not timed), then the CUDA kernels alone
            subprocess.run(
                ["cmake", "--build", str(cuda_build), "-j", str(args.jobs), "--target", "kiln_codegen"],
                cwd=cuda_src,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            result["cuda_kernels_s"] = timed(
                ["cmake", "--build", str(cuda_build), "-j", str(args.jobs), "--target", "kiln_cuda_kernels"], cuda_src
            )
            objects = [(t, s) for t, s in ninja_entries(cuda_build) if t.endswith(".o")]
            # the pointwise kernels come a few ops per file (generated/src/cuda/pointwise_<NN>.cu)
            batches = [s for t, s in objects if "generated/src/cuda/pointwise_" in t and t.endswith(".cu.o")]
            ops = sum(
                p.read_text().count("_elementwise(const ElementwiseArgs& args) {")
                for p in (cuda_build / "generated" / "src" / "cuda").glob("pointwise_*.cu")
            )
            result["cuda_pointwise_ops"] = ops
            result["cuda_pointwise_files"] = len(batches)
            result["cuda_s_per_pointwise_op"] = sum(batches) / ops if ops else 0.0
            result["cuda_share"] = result["cuda_kernels_s"] / (result["cuda_kernels_s"] + result["clean_build_s"])
            print(
                f"CUDA kernels of a clean build: {result['cuda_kernels_s']:.1f} s "
                f"({100 * result['cuda_share']:.0f}% of a clean CUDA build), nvcc "
                f"{result['cuda_s_per_pointwise_op']:.1f} s per pointwise op ({len(pointwise)} ops)",
                flush=True,
            )
            # The same added pointwise op as above, now in the CUDA build: the kernels it recompiles.
            cuda_unary = cuda_src / "ops" / "pointwise_unary.yaml"
            cuda_unary.write_text(cuda_unary.read_text() + NEW_POINTWISE_OP)
            rebuild(
                ["cmake", "--build", str(cuda_build), "-j", str(args.jobs), "--target", "kiln_cuda_kernels"],
                cuda_src,
                cuda_build,
                "CUDA kernels rebuilt after adding a pointwise op",
                result,
                "cuda_add_pointwise_op_s",
                own=["measure_build_probe"],
            )
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
