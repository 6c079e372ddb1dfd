"""build(doc): a loaded registry document validated into a Registry.

Every problem is collected as a RegistryError carrying the line it belongs to; nothing is
written unless the whole registry is valid.
"""
from . import engines as engines_mod
from . import formulas
from .entry_parse import parse_op
from .errors import ErrorList, RegistryError
from .model import BACKENDS, TOP_KEYS, Registry
from .registry_root import load_groups, load_helpers, load_meta_families


class _Context:
    def __init__(self, meta_families, engines):
        self.formula_lines = {}
        self.meta_families = meta_families
        self.engines = engines


def build(doc):
    """Validate a loaded registry document into a Registry; raise ErrorList on any problem. Only
    the document is read: the hand-written C++ it names is checked by the compiler and linker
    (generated/src/helpers_check.cpp; kernel tables and composite calls name their functions)."""
    errors = []
    if not isinstance(doc, dict):
        raise ErrorList([RegistryError(1, "the registry must be a mapping with 'dtype_groups' and 'ops'")])
    for k in doc:
        if k not in TOP_KEYS:
            errors.append(
                RegistryError(doc.line_of(k), f"unknown top-level key '{k}'", f"known: {', '.join(sorted(TOP_KEYS))}")
            )
    groups = load_groups(doc.get("dtype_groups"), errors)
    meta_families = load_meta_families(doc.get("meta_families"), errors)
    engines = engines_mod.load_engines(doc.get("engines"), BACKENDS, errors)
    helpers = load_helpers(doc.get("helpers"), doc.line_of("helpers") if "helpers" in doc else 1, errors)
    raw_ops = doc.get("ops")
    if not isinstance(raw_ops, list):
        errors.append(RegistryError(doc.line_of("ops") if "ops" in doc else 1, "'ops' must be a list of op entries"))
        raise ErrorList(errors)
    ctx = _Context(meta_families, engines)
    ops = []
    seen = {}
    for raw in raw_ops:
        if not isinstance(raw, dict):
            errors.append(RegistryError(doc.line_of("ops"), f"op entry must be a mapping, got {raw!r}"))
            continue
        op = parse_op(raw, groups, ctx, errors)
        if op is None:
            continue
        if op.full_name in seen:
            errors.append(
                RegistryError(
                    op.line, f"duplicate op '{op.full_name}'", f"first defined at {{line:{seen[op.full_name]}}}"
                )
            )
            continue
        seen[op.full_name] = op.line
        ops.append(op)
    registry = Registry(ops=ops, groups=groups, meta_families=meta_families, engines=engines, helpers=helpers)
    formulas.check_registry(registry, ctx.formula_lines, errors)
    if errors:
        errors.sort(key=lambda e: e.line)
        raise ErrorList(errors)
    return registry
