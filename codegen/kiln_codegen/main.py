"""Command line: validate ops.yaml, then render generated/."""
import argparse
import os
import sys
import time

from . import loader, model, render
from .errors import ErrorList, RegistryError


def run(argv=None):
    parser = argparse.ArgumentParser(description="Generate kiln's C++ from ops.yaml")
    parser.add_argument("--ops", required=True, help="path of ops.yaml")
    parser.add_argument("--out", required=True, help="output directory (generated/)")
    parser.add_argument("--root", default=None, help="source tree, to find hand-written kernels (default: ops.yaml's folder)")
    parser.add_argument("--check", action="store_true", help="validate only, write nothing")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    root = args.root or os.path.dirname(os.path.abspath(args.ops))
    shown = os.path.basename(args.ops)
    start = time.perf_counter()
    try:
        with open(args.ops, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        print(f"{shown}:1: cannot read: {e.strerror}", file=sys.stderr)
        return 1
    try:
        doc = loader.load(text)
        registry = model.build(doc, root)
    except RegistryError as e:
        print(e.format(shown), file=sys.stderr)
        return 1
    except ErrorList as el:
        for e in el.errors:
            print(e.format(shown), file=sys.stderr)
        print(f"{shown}: {len(el.errors)} error(s); nothing was generated", file=sys.stderr)
        return 1
    for op in getattr(registry, "missing", []):
        print(f"{shown}:{op.line}: warning: {op.full_name}: {op.kind} '{op.body}' not written yet; "
              "it raises NotImplementedError (KILN_ALLOW_MISSING_KERNELS=1)", file=sys.stderr)
    if args.check:
        return 0
    changed, total = render.render(registry, args.out, source=os.path.abspath(args.ops))
    if not args.quiet:
        print(f"kiln codegen: {len(registry.ops)} ops, {changed} of {total} files changed "
              f"({time.perf_counter() - start:.2f} s)")
    return 0
