"""Command line: validate the registry (ops.yaml and the family files it lists), then render generated/.

What is generated depends on the registry, the templates and the generator's own sources only:
no environment variable, build option or hand-written C++ file is read. The C++ the registry
names is checked where C++ is compiled: a kernel or composite function nobody defined fails to
link, a listed helper nobody declared fails to compile (generated/src/helpers_check.cpp)."""
import argparse
import hashlib
import os
import sys
import time

from . import loader, render
from .build import build
from .errors import ErrorList, RegistryError


def run(argv=None):
    parser = argparse.ArgumentParser(description="Generate kiln's C++ from the op registry")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--registry", metavar="OPS_YAML", help="the registry's root file (ops.yaml), which lists the family files"
    )
    where.add_argument(
        "--ops",
        dest="registry",
        metavar="PATH",
        help="older spelling: the family folder (ops/, meaning the ops.yaml " "beside it) or a root file",
    )
    parser.add_argument("--out", required=True, help="output directory (generated/)")
    # Older callers pass the source tree; nothing reads it now.
    parser.add_argument("--root", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help="validate only, write nothing")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--stamp", help="after a successful run, write a digest of the inputs here")
    parser.add_argument(
        "--reuse-stamp",
        action="store_true",
        help="do nothing when --stamp already holds the inputs' digest (the build step, after "
        "the configure step generated from the same registry and generator)",
    )
    args = parser.parse_args(argv)
    digest = _inputs_digest(args) if args.stamp else None
    if args.reuse_stamp and digest and _read(args.stamp) == digest:
        os.utime(args.stamp)
        if not args.quiet:
            print("kiln codegen: generated/ is current (same registry and generator as its last run)")
        return 0
    registry_file = loader.registry_root(args.registry)
    start = time.perf_counter()
    sources = os.path.basename(registry_file)
    try:
        doc, sources = loader.load_registry(registry_file)
        registry = build(doc)
    except OSError as e:
        print(f"{e.filename or registry_file}:1: cannot read: {e.strerror}", file=sys.stderr)
        return 1
    except RegistryError as e:
        print(e.format(getattr(e, "sources", sources)), file=sys.stderr)
        return 1
    except ErrorList as el:
        for e in el.errors:
            print(e.format(sources), file=sys.stderr)
        print(f"{sources.label}: {len(el.errors)} error(s); nothing was generated", file=sys.stderr)
        return 1
    if args.check:
        return 0
    changed, total = render.render(registry, args.out, sources=sources)
    if args.stamp:
        with open(args.stamp, "w", encoding="utf-8") as fh:
            fh.write(digest)
    if not args.quiet:
        print(
            f"kiln codegen: {len(registry.ops)} ops, {changed} of {total} files changed "
            f"({time.perf_counter() - start:.2f} s)"
        )
    return 0


def _inputs_digest(args):
    """What a run's output depends on: the registry files, the generator's own files and the
    arguments."""
    h = hashlib.sha256(repr((os.path.abspath(loader.registry_root(args.registry)), os.path.abspath(args.out))).encode())
    here = os.path.dirname(os.path.abspath(__file__))
    files = loader.registry_files(args.registry) + sorted(
        os.path.join(d, f) for d, _, names in os.walk(here) for f in names if f.endswith((".py", ".j2"))
    )
    for path in files:
        h.update(path.encode())
        with open(path, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def _read(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None
