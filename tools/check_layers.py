#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer it may not see.

kiln's layers (CMakeLists.txt builds one target per layer with exactly these include roots):
  math        kernels/include/kiln/common, and the leaf headers kiln/macros.h, half.h, complex.h,
              dtype.h, philox.h (in runtime/include): math shared by host and device
  kernel_sdk  kernels/include/kiln/kernel: kernel helpers over TensorBase and the meta plans
  cpu_sdk     kernels/include/kiln/cpu: the CPU loops and thread splitting the CPU kernels build on
  headers     runtime/include (less the leaves), generated/include: the public API and the
              kernel-facing API (kiln/meta, kiln/cuda), generated declarations
  core        runtime/src, generated/src/{ops,registry,helpers_check.cpp}
  cpu         kernels/cpu, generated/src/cpu
  cuda        kernels/cuda, generated/src/cuda
  optim       optim/include, optim/src: optimizers, LR schedulers, clip_grad, GradScaler
  nn, io      nn/, io/: frontends to come (checked once their folders exist)

The arrows each layer may follow (ALLOWED; a layer not listed on the right is forbidden):
  math        -> math
  kernel_sdk  -> math, headers, kernel_sdk
  cpu_sdk     -> math, headers, cpu_sdk
  headers     -> math, headers
  core        -> math, headers, core
  cpu         -> math, kernel_sdk, cpu_sdk, headers, cpu
  cuda        -> math, kernel_sdk, headers, cuda
  optim       -> math, headers, optim
  nn          -> math, headers, nn
  io          -> math, headers, io
So math is closed (it includes only itself and system headers), neither backend sees the other,
the core sees no kernel SDK (its CPU copies and fills are the CPU kernels', reached through
kiln/device_hooks.h), no kernel sees runtime/src, nothing below a frontend includes it, and no
frontend sees another.

Each quoted include is resolved the way the compiler would (the including file's directory,
then the include roots) and the file it names must lie in a layer the includer may see, so
`../cpu/x.h` or a header reached through another root is caught as well as a wrong prefix.
Generated sources live in a build folder (<build>/generated): `--build <build>` checks them too
(and resolves includes of generated headers); without it only the hand-written sources are
checked. Run by CTest (`layering`) with its build folder.

It also fails when a kernel file (cpu or cuda layer), or a generated op entry written over
TensorBase (one that includes kiln/op_entry.h), reaches, through any chain of includes, a
header that changes when an op is added or a signature changes (kiln/tensor.h with its op
methods, the generated op declarations): kernels see TensorBase and their own kernel's
declaration only, so adding an op recompiles none of them. The CUDA pointwise host entries list
every op and are exempt.

And it fails when a file outside the cuda layer (other than runtime/src/cuda/ and
runtime/src/cuda_absent/, the core's side of the backend) calls a `cuda::detail::` function
that kernels/cuda defines: the core reaches kernels through op entries or the device hooks
(kiln/device_hooks.h), never by name.

`--op-independent` prints the core's sources (runtime/src) that reach no such header, one per
line (give `--build` too: an include of a generated header counts only when it resolves); CMake compiles them without the core's precompiled header (the whole op API), so adding an
op recompiles only the runtime that calls ops.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".cpp", ".cu", ".cuh")

# Leaf headers of runtime/include that kiln/common builds on: part of the math layer.
MATH_LEAVES = {f"runtime/include/kiln/{h}" for h in ("macros.h", "half.h", "complex.h", "dtype.h", "philox.h")}
# layer: (where its files are, extra include roots of its target)
LAYERS = {
    "math": (("kernels/include/kiln/common/",) + tuple(sorted(MATH_LEAVES)), ()),
    "kernel_sdk": (("kernels/include/kiln/kernel/",), ()),
    "cpu_sdk": (("kernels/include/kiln/cpu/",), ()),
    "headers": (("runtime/include/", "generated/include/"), ()),
    # generated/src/ops/batches/ compiles the entries a few to a file, by including them
    "core": (
        ("runtime/src/", "generated/src/ops/", "generated/src/registry", "generated/src/helpers_check.cpp"),
        ("runtime/src",),
    ),
    "cpu": (("kernels/cpu/", "generated/src/cpu/"), ("kernels/cpu",)),
    "cuda": (("kernels/cuda/", "generated/src/cuda/"), ("kernels/cuda",)),
    "optim": (("optim/",), ("optim/include",)),
    # Frontends to come; their rows hold once the folders exist.
    "nn": (("nn/",), ("nn/include",)),
    "io": (("io/",), ("io/include",)),
}
# layer -> the layers it may include (its own included where listed).
ALLOWED = {
    "math": {"math"},
    "kernel_sdk": {"math", "headers", "kernel_sdk"},
    "cpu_sdk": {"math", "headers", "cpu_sdk"},
    "headers": {"math", "headers"},
    "core": {"math", "headers", "core"},
    "cpu": {"math", "kernel_sdk", "cpu_sdk", "headers", "cpu"},
    "cuda": {"math", "kernel_sdk", "headers", "cuda"},
    "optim": {"math", "headers", "optim"},  # optim never sees nn
    "nn": {"math", "headers", "nn"},
    "io": {"math", "headers", "io"},  # should see the tensor but not the op API: to be narrowed when io/ exists
}
assert set(ALLOWED) == set(LAYERS)
TOPS = ("runtime", "kernels", "generated", "optim", "nn", "io")  # those missing are skipped
SHARED_ROOTS = ("runtime/include", "generated/include", "kernels/include")
# Roots of other layers, tried last so that a header reached through them is reported, not missed.
OTHER_ROOTS = ("runtime/src", "kernels/cuda", "kernels/cpu", "optim/include", "nn/include", "io/include", "")


def layer_of(rel):
    # A math leaf by name; otherwise the longest matching prefix wins (kernels/include/kiln/common
    # before anything shorter).
    if rel in MATH_LEAVES:
        return "math"
    best = None
    for name, (where, _) in LAYERS.items():
        for prefix in where:
            if rel.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
                best = (name, prefix)
    return best[0] if best else None


# Where the files named generated/... are: <build>/generated, set by --build; None leaves them out.
GENERATED_DIR = None


def real_path(rel):
    """The file a repository-relative name stands for; generated/... lies in the build folder."""
    top, _, rest = rel.partition("/")
    if top == "generated":
        return os.path.join(GENERATED_DIR, rest) if GENERATED_DIR else os.devnull + "/none"
    return os.path.join(ROOT, rel)


def resolve(rel, inc, layer):
    roots = [os.path.dirname(rel)] + list(LAYERS[layer][1]) + list(SHARED_ROOTS) + list(OTHER_ROOTS)
    for root in roots:
        cand = os.path.normpath(os.path.join(root, inc)).replace(os.sep, "/")
        if not cand.startswith("../") and os.path.isfile(real_path(cand)):
            return cand
    return None  # a system or third-party header


def files_under(top):
    where = real_path(top)
    for dirpath, _, files in os.walk(where):
        for f in sorted(files):
            if f.endswith(SOURCES):
                yield top + "/" + os.path.relpath(os.path.join(dirpath, f), where).replace(os.sep, "/")


def layered_files():
    for top in TOPS:
        for rel in files_under(top):
            layer = layer_of(rel)
            if layer is not None:
                yield rel, layer


def read(rel):
    with open(real_path(rel), encoding="utf-8") as fh:
        return fh.read()


def crossings():
    found = []
    for rel, layer in layered_files():
        text = read(rel)
        for m in INCLUDE.finditer(text):
            target = resolve(rel, m.group(1), layer)
            if target is None:
                continue
            other = layer_of(target)
            if other not in ALLOWED[layer]:
                line = text.count("\n", 0, m.start()) + 1
                found.append((rel, line, m.group(1), target, layer, other or "outside the layers"))
    return found


# Headers whose text changes when an op is added or a signature changes.
REGISTRY_WIDE = {
    "runtime/include/kiln/tensor.h",
    "runtime/include/kiln/kiln.h",
    "runtime/include/kiln/op_support.h",
    "generated/src/cuda/cuda_elementwise.h",
} | {
    f"generated/include/kiln/gen/{h}"
    for h in ("ops.h", "factories.h", "tensor_methods.h", "tensor_methods_inl.h", "composite.h", "op_kernels.h")
}
# Kernel-layer files that list every op by design.
LISTS_EVERY_OP = {"generated/src/cuda/pointwise_entries.cpp", "generated/src/cuda/cuda_elementwise.h"}


def quoted_includes(rel, layer):
    for m in INCLUDE.finditer(read(rel)):
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


def is_entry_over_base(rel):
    """A generated op entry written over TensorBase (target kiln_op_entries)."""
    if not (rel.startswith("generated/src/ops/") and rel.endswith(".cpp")):
        return False
    return '#include "kiln/op_entry.h"' in read(rel)


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


# The core's own side of the CUDA backend (streams, allocator, the stubs of a CPU-only build).
CUDA_DETAIL_CALLERS = ("runtime/src/cuda/", "runtime/src/cuda_absent/")
CUDA_DETAIL_CALL = re.compile(r"\bcuda::detail::(\w+)")
CODE_NOISE = re.compile(r"""("(?:\\.|[^"\\\n])*")|('(?:\\.|[^'\\\n])')|//[^\n]*|/\*.*?\*/""", re.S)
SCOPE = re.compile(r'\bnamespace\s+([\w:]*)\s*\{|\bextern\s+""\s*(\{)|([{}])')
DEFINITION = re.compile(
    r"(?m)^[ \t]*((?:[\w:<>,*&]+[ \t]+)+)[*&]*((?:\w+::)*)(\w+)\s*\([^;{}]*\)\s*" r"(?:const\s*)?(?:noexcept\s*)?\{"
)
NOT_A_TYPE = {"return", "else", "case", "new", "delete", "throw", "co_return"}


def code_of(rel):
    """The text of rel without comments or the contents of literals (lines kept), so that only
    code is matched and a brace or ';' in a string is none."""

    def blank(m):
        if m.group(1) or m.group(2):
            return m.group(0)[0] * 2
        return "\n" * m.group(0).count("\n") or " "

    return CODE_NOISE.sub(blank, read(rel))


def cuda_defined_functions():
    """Names of the functions the cuda layer defines (with a body) in a named cuda::detail
    namespace, outside any class or function: what a caller can name as cuda::detail::f."""
    names = set()
    for rel, layer in layered_files():
        if layer != "cuda":
            continue
        text = code_of(rel)
        events = sorted(
            [(m.start(), "scope", m) for m in SCOPE.finditer(text)]
            + [(m.start(), "def", m) for m in DEFINITION.finditer(text)],
            key=lambda e: e[0],
        )
        stack = []  # per open brace: the namespace it opens, "" for extern "C", None for any other
        for _, kind, m in events:
            if kind == "def":
                if None in stack or "<anonymous>" in stack or m.group(1).split()[0] in NOT_A_TYPE:
                    continue
                path = "::".join([n for n in stack if n] + [m.group(2).rstrip(":")]).strip(":")
                if re.search(r"(?:^|::)cuda::detail$", path):
                    names.add(m.group(3))
            elif m.group(3) == "}":
                if stack:
                    stack.pop()
            elif m.group(3) == "{":
                stack.append(None)
            elif m.group(2):
                stack.append("")  # extern "C"
            else:
                stack.append(m.group(1) or "<anonymous>")
    return names


def cuda_detail_calls():
    """(file, line, function) for every call of a kernels/cuda cuda::detail function from outside
    the cuda layer."""
    defined = cuda_defined_functions()
    found = []
    for rel, layer in layered_files():
        if layer == "cuda" or rel.startswith(CUDA_DETAIL_CALLERS):
            continue
        text = code_of(rel)
        for m in CUDA_DETAIL_CALL.finditer(text):
            if m.group(1) in defined:
                found.append((rel, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return found


def main():
    global GENERATED_DIR
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", help="the build folder whose generated/ is checked too")
    parser.add_argument("--op-independent", action="store_true", help="print the op-independent runtime sources")
    args = parser.parse_args()
    if args.build:
        GENERATED_DIR = os.path.join(os.path.abspath(args.build), "generated")
        if not os.path.isdir(GENERATED_DIR):
            sys.exit(f"check_layers: {GENERATED_DIR} does not exist (configure that build folder first)")
    if args.op_independent:
        print("\n".join(op_independent_runtime()))
        return 0
    found = crossings()
    for rel, line, inc, target, layer, other in found:
        print(
            f'{rel}:{line}: includes "{inc}" ({target}): the {layer} layer may not see the {other} layer '
            f"(it sees {', '.join(sorted(ALLOWED[layer]))})"
        )
    print(f"layering: {len(found)} forbidden include(s)")
    reaches = registry_wide_reaches()
    for rel, path in reaches:
        print(
            f"{rel}: reaches {path[-1]}, which changes when an op is added ({' -> '.join(path)}); "
            "kernels include kiln/tensor_base.h and their own kiln/gen/kernels/<backend>/<name>.h, op entries "
            "kiln/op_entry.h and kiln/gen/ops/<name>.h"
        )
    print(f"layering: {len(reaches)} kernel or op-entry file(s) that an added op would recompile")
    calls = cuda_detail_calls()
    for rel, line, name in calls:
        print(
            f"{rel}:{line}: calls cuda::detail::{name}, defined in kernels/cuda; reach the kernel through its op "
            "entry or a device hook (kiln/device_hooks.h)"
        )
    print(f"layering: {len(calls)} call(s) into kernels/cuda by name")
    return 1 if found or reaches or calls else 0


if __name__ == "__main__":
    sys.exit(main())
