#!/usr/bin/env python3
"""Fails when a source file includes across a layer boundary it may not cross.

kiln's layers, each seeing only what is below it:
  runtime/include/kiln (public API and the kernel-facing API: kiln/meta, kiln/cpu/loops.h,
                        kiln/cpu/parallel.h, kiln/cuda/context.h ...)
  runtime/src            (the core: dispatch, autograd, meta steps, allocators)
  kernels/common         (math shared by host and device)
  kernels/cpu, kernels/cuda (one backend each; neither includes the other)

KNOWN lists the crossings that exist today and are still to be removed; a new one fails, and a
listed one that is gone must be deleted from the list (so the list only shrinks).
Run by CTest (test `layering`) in every `tools/kiln test`.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".cpp", ".cu", ".cuh")

# (directory, forbidden include prefix, why)
RULES = [
    ("kernels/cuda", "kernels/cpu/", "CUDA kernels share with the CPU only meta steps (kiln/meta) and kernels/common"),
    ("kernels/cpu", "kernels/cuda/", "CPU kernels never see CUDA code"),
    ("kernels/common", "kernels/cpu/", "common math is below both backends"),
    ("kernels/common", "kernels/cuda/", "common math is below both backends"),
    ("kernels/common", "runtime/src/", "common math sees only the public headers"),
    ("kernels", "runtime/src/", "kernels see the runtime through runtime/include only"),
    ("runtime/include", "runtime/src/", "public headers cannot reach into the core's sources"),
    ("runtime/include", "kernels/", "public headers are below the kernels"),
    ("runtime", "kernels/", "the runtime is below the kernels"),
]

# Crossings still to remove (file, included path).
KNOWN = {
    ("runtime/src/random_fill.h", "kernels/common/random_blocks.h"),
    ("runtime/src/cuda/elementwise_launch.h", "kernels/cuda/elementwise_args.h"),
    ("kernels/cuda/blas.cu", "runtime/src/cuda/cublas_api.h"),
    ("kernels/cuda/copy.cu", "runtime/src/core/convert.h"),
    ("kernels/cuda/copy.cu", "runtime/src/core/device_copy.h"),
    ("kernels/cuda/copy.cu", "runtime/src/cuda/elementwise_launch.h"),
    ("kernels/cuda/random.cu", "runtime/src/core/device_random.h"),
    ("kernels/cuda/randperm.cu", "runtime/src/core/device_random.h"),
}


def crossings():
    found = []
    for top in ("runtime", "kernels"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    inc = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    for directory, prefix, why in RULES:
                        if rel.startswith(directory + "/") and inc.startswith(prefix):
                            found.append((rel, line, inc, why))
                            break
    return found


def main():
    found = crossings()
    seen = set()
    bad = 0
    for rel, line, inc, why in found:
        seen.add((rel, inc))
        if (rel, inc) not in KNOWN:
            print(f"{rel}:{line}: includes \"{inc}\": {why}")
            bad += 1
    for rel, inc in sorted(KNOWN - seen):
        print(f"tools/check_layers.py: ({rel!r}, {inc!r}) is gone; delete it from KNOWN")
        bad += 1
    known = len(KNOWN & seen)
    print(f"layering: {len(found) - known} new crossing(s), {known} known crossing(s) still to remove")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
