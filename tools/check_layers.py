#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer it may not see.

kiln's layers (CMakeLists.txt builds one target per layer with exactly these include roots):
  common   kernels/include/kiln/common   math shared by host and device; below everything
  headers  runtime/include, generated/include
                                         the public API and the kernel-facing API (kiln/meta,
                                         kiln/cpu, kiln/cuda), generated declarations
  core     runtime/src, generated/src/{ops,registry,missing}
  cpu      kernels/cpu, generated/src/cpu
  cuda     kernels/cuda, generated/src/cuda
The core and the two backends see the headers and common, plus their own directories; neither
backend sees the other, and no kernel sees runtime/src.

Each quoted include is resolved the way the compiler would (the including file's directory,
then the include roots) and the file it names must lie in a layer the includer may see, so
`../cpu/x.h` or a header reached through another root is caught as well as a wrong prefix.
Generated sources are checked when generated/ exists (after a build). Run by CTest (`layering`).

It also fails when a kernel file (cpu or cuda layer), or a generated op entry written over
TensorBase (one that includes kiln/op_entry.h), reaches, through any chain of includes, a
header that changes when an op is added or a signature changes (kiln/tensor.h with its op
methods, the generated op declarations): kernels see TensorBase and their own kernel's
declaration only, so adding an op recompiles none of them. The CUDA pointwise host entries list
every op and are exempt.

`--op-independent` prints the core's sources (runtime/src) that reach no such header, one per
line; CMake compiles them without the core's precompiled header (the whole op API), so adding an
op recompiles only the runtime that calls ops.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".cpp", ".cu", ".cuh")

COMMON = "kernels/include/kiln/common/"
HEADERS = ("runtime/include/", "generated/include/")
# layer: (where its files are, what they may include, extra include roots of its target)
LAYERS = {
    "common": ((COMMON,), (COMMON, "runtime/include/"), ()),
    "headers": (HEADERS, HEADERS + ("kernels/include/",), ()),
    # generated/src/ops/batches/ compiles the entries a few to a file, by including them
    "core": (("runtime/src/", "generated/src/ops/", "generated/src/registry", "generated/src/missing"),
             HEADERS + ("kernels/include/", "runtime/src/", "generated/src/ops/"), ("runtime/src",)),
    "cpu": (("kernels/cpu/", "generated/src/cpu/"),
            HEADERS + ("kernels/include/", "kernels/cpu/", "generated/src/cpu/"), ()),
    "cuda": (("kernels/cuda/", "generated/src/cuda/"),
             HEADERS + ("kernels/include/", "kernels/cuda/", "generated/src/cuda/"), ("kernels/cuda",)),
}
SHARED_ROOTS = ("runtime/include", "generated/include", "kernels/include")
# Roots of other layers, tried last so that a header reached through them is reported, not missed.
OTHER_ROOTS = ("runtime/src", "kernels/cuda", "kernels/cpu", "")


def layer_of(rel):
    # The longest matching prefix wins (kernels/include/kiln/common before anything shorter).
    best = None
    for name, (where, _, _) in LAYERS.items():
        for prefix in where:
            if rel.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
                best = (name, prefix)
    return best[0] if best else None


def resolve(rel, inc, layer):
    roots = [os.path.dirname(rel)] + list(LAYERS[layer][2]) + list(SHARED_ROOTS) + list(OTHER_ROOTS)
    for root in roots:
        cand = os.path.normpath(os.path.join(ROOT, root, inc))
        if os.path.isfile(cand):
            return os.path.relpath(cand, ROOT).replace(os.sep, "/")
    return None  # a system or third-party header


def crossings():
    found = []
    for top in ("runtime", "kernels", "generated"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                layer = layer_of(rel)
                if layer is None:
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    target = resolve(rel, m.group(1), layer)
                    if target is None:
                        continue
                    if not target.startswith(LAYERS[layer][1]):
                        line = text.count("\n", 0, m.start()) + 1
                        found.append((rel, line, m.group(1), target, layer, layer_of(target) or "outside the layers"))
    return found


# Headers whose text changes when an op is added or a signature changes.
REGISTRY_WIDE = {"runtime/include/kiln/tensor.h", "runtime/include/kiln/kiln.h", "runtime/include/kiln/op_support.h",
                 "generated/src/cuda/cuda_elementwise.h"} | {
    f"generated/include/kiln/gen/{h}" for h in ("ops.h", "factories.h", "tensor_methods.h", "tensor_methods_inl.h",
                                                "composite.h")}
# Kernel-layer files that list every op by design.
LISTS_EVERY_OP = {"generated/src/cuda/pointwise_entries.cpp", "generated/src/cuda/cuda_elementwise.h"}


def quoted_includes(rel, layer):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        text = fh.read()
    for m in INCLUDE.finditer(text):
        target = resolve(rel, m.group(1), layer)
        if target is not None:
            yield target


def registry_wide_chain(rel, layer):
    """The chain of includes from `rel` to a registry-wide header, or None when it reaches none."""
    chain = {rel: None}  # breadth-first over includes, remembering who included what
    queue = [rel]
    while queue:
        cur = queue.pop(0)
        if cur in REGISTRY_WIDE:
            path = [cur]
            while chain[path[-1]] is not None:
                path.append(chain[path[-1]])
            return list(reversed(path))
        for target in quoted_includes(cur, layer):
            if target not in chain:
                chain[target] = cur
                queue.append(target)
    return None


def files_under(top):
    for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith(SOURCES):
                yield os.path.relpath(os.path.join(dirpath, f), ROOT).replace(os.sep, "/")


def is_entry_over_base(rel):
    """A generated op entry written over TensorBase (target kiln_op_entries)."""
    if not (rel.startswith("generated/src/ops/") and rel.endswith(".cpp")):
        return False
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return '#include "kiln/op_entry.h"' in fh.read()


def registry_wide_reaches():
    """(file, chain of includes to a registry-wide header) for every kernel file, and every op
    entry written over TensorBase, that has one."""
    found = []
    for top in ("kernels/cpu", "kernels/cuda", "generated/src"):
        for rel in files_under(top):
            layer = layer_of(rel)
            if rel in LISTS_EVERY_OP or not (layer in ("cpu", "cuda") or is_entry_over_base(rel)):
                continue
            path = registry_wide_chain(rel, layer)
            if path:
                found.append((rel, path))
    return found


def op_independent_runtime():
    """The runtime/src sources that reach no registry-wide header."""
    return [rel for rel in files_under("runtime/src") if rel.endswith(".cpp") and not registry_wide_chain(rel, "core")]


def main():
    if sys.argv[1:] == ["--op-independent"]:
        print("\n".join(op_independent_runtime()))
        return 0
    found = crossings()
    for rel, line, inc, target, layer, other in found:
        print(f"{rel}:{line}: includes \"{inc}\" ({target}): the {layer} layer may not see the {other} layer")
    print(f"layering: {len(found)} forbidden include(s)")
    reaches = registry_wide_reaches()
    for rel, path in reaches:
        print(f"{rel}: reaches {path[-1]}, which changes when an op is added ({' -> '.join(path)}); "
              "kernels include kiln/tensor_base.h and their own kiln/gen/kernels/<backend>/<name>.h, op entries "
              "kiln/op_entry.h and kiln/gen/ops/<name>.h")
    print(f"layering: {len(reaches)} kernel or op-entry file(s) that an added op would recompile")
    return 1 if found or reaches else 0


if __name__ == "__main__":
    sys.exit(main())
