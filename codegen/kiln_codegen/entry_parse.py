"""One registry entry into an Op: parse_op reads it key group by key group. The signature, the
kind (pointwise, kernel, composite), family, dtypes and dispatch, the body and the doc are read
here; the other key groups in entry_kind_keys.py, entry_autograd.py, entry_meta.py,
entry_variants.py, entry_checks.py and samples.py."""
import re

from . import composite_check, dispatch_keys
from . import engines as engines_mod
from .cpp import OPTIONS_GROUP, options_start
from .entry_autograd import parse_derivatives, parse_differentiability
from .entry_checks import parse_checks_and_autocast
from .entry_kind_keys import parse_kind_keys
from .entry_meta import check_meta, check_writes
from .entry_variants import parse_variants
from .errors import RegistryError
from .model import FAMILIES, OP_KEYS, Op, replace
from .registry_root import expand_dtypes
from .samples import parse_test_keys, validate_samples
from .signature import SignatureError, parse_signature


def parse_op(raw, groups, ctx, errors):
    """One registry entry into an Op, key group by key group; None when it cannot be read (the
    problems are in errors). Past the signature, an entry with errors stops before its meta step
    and before its samples, whose checks assume the rest is sound."""
    sig = _parse_signature(raw, errors)
    if sig is None:
        return None
    n_before = len(errors)
    parsed = _parse_kind(raw, sig, errors)
    if parsed is None:
        return None
    kind, body = parsed
    engine = engines_mod.parse_engine(raw, sig, ctx.engines, errors)
    if engine is not None and kind != "kernel":
        errors.append(
            RegistryError(
                raw.line_of("engine"),
                f"{sig.full_name}: an engine op has no {kind}: key (its kernels are the engine's)",
            )
        )
    op = _parse_dtypes(raw, sig, kind, body, groups, errors, ctx.engines.get(engine.engine) if engine else None)
    op = replace(op, engine=engine)
    for t in op.kernel_targets if engine else []:
        if t.backend not in ctx.engines[engine.engine].headers:
            errors.append(
                RegistryError(
                    raw.line_of("dispatch"),
                    f"{sig.full_name}: dispatch: {t.key}: engine '{engine.engine}' has no {t.backend} front",
                    "write the engine's front for that backend and name its header in ops.yaml's engines:",
                )
            )
    op = _parse_body_and_doc(op, raw, errors)
    op = parse_kind_keys(op, raw, ctx, errors)
    op = parse_derivatives(op, raw, ctx, errors)
    op = parse_differentiability(op, raw, ctx, errors)
    for key in ("result_dtype", "identity"):
        if key in raw and "meta" not in raw:
            errors.append(
                RegistryError(
                    raw.line_of(key), f"{sig.full_name}: '{key}' applies to structured kernel ops (meta:) only"
                )
            )
    if "meta" in raw:
        op = check_meta(replace(op, meta=str(raw["meta"])), raw, ctx.meta_families, errors)
        if len(errors) > n_before:
            return None
    family = ctx.meta_families.get(op.meta) if op.meta is not None else None
    if not (family is not None and family.mutates):
        check_writes(op, raw, errors)
        if len(errors) > n_before:
            return None
    op = parse_variants(op, raw, family, errors)
    if op.composite_route and op.variants != ["function"]:
        errors.append(
            RegistryError(
                raw.line_of("variants") if "variants" in raw else op.line,
                f"{sig.full_name}: a kernel op served by its composite on some backend has the function variant only",
                "variants: [function] (its out= and in-place forms would bypass the composite)",
            )
        )
    op = parse_test_keys(op, raw, errors)
    op = parse_checks_and_autocast(op, raw, errors)
    if len(errors) > n_before:
        return None
    return replace(
        op,
        samples=validate_samples(
            op, raw.get("samples"), raw.line_of("samples") if "samples" in raw else op.line, errors
        ),
    )


def _parse_signature(raw, errors):
    """Unknown keys, and the signature; None when there is none to read."""
    line = raw.line
    unknown = [k for k in raw if k not in OP_KEYS]
    for k in unknown:
        errors.append(RegistryError(raw.line_of(k), f"unknown key '{k}'", f"known keys: {', '.join(sorted(OP_KEYS))}"))
    if "signature" not in raw:
        errors.append(RegistryError(line, "op entry has no 'signature'", "e.g. signature: exp(Tensor self) -> Tensor"))
        return None
    try:
        sig = parse_signature(str(raw["signature"]))
    except SignatureError as e:
        errors.append(
            RegistryError(
                raw.line_of("signature"),
                f"bad signature: {e}",
                "ATen schema grammar, e.g. add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            )
        )
        return None
    return sig


def _check_options_group(sig, line, errors):
    """Device and Layout come only as PyTorch's factory keywords, which C++ folds into TensorOptions."""
    group = "*, " + ", ".join(f"{t} {n}={d}" for n, t, d in OPTIONS_GROUP)
    uses = [a.name for a in sig.arguments if a.type.base in ("Device", "Layout") or a.name in ("device", "layout")]
    if not uses:
        return
    start = options_start(sig)
    if start is None:
        errors.append(
            RegistryError(
                line,
                f"{sig.full_name}: '{uses[0]}' belongs to the factory keywords, which come together "
                "and in this order",
                f"write {group}",
            )
        )
    elif not sig.arguments[start].kwarg_only:
        errors.append(RegistryError(line, f"{sig.full_name}: the factory keywords are keyword-only", f"write {group}"))


# Keys that `dispatch:` replaced, and how to write what they said.
RETIRED_DISPATCH_KEYS = {
    "kernel": "dispatch: {cpu: <kernel>, cuda: <kernel>} names the kernel of each backend",
    "backends": "dispatch: {cpu: <target>} lists the backends (default for pointwise and composite: every one)",
    "cuda_dtypes": "dispatch: {cuda: {target: <target>, dtypes: [...]}} narrows a backend's dtypes",
}


def _parse_kind(raw, sig, errors):
    """What serves the entry: (kind, body), kind one of pointwise, kernel (only `dispatch:`
    kernels), composite; None when it cannot tell."""
    line = raw.line
    _check_options_group(sig, raw.line_of("signature"), errors)
    if "native" in raw:
        errors.append(
            RegistryError(
                raw.line_of("native"),
                f"{sig.full_name}: 'native' is retired",
                "write composite: <function>, defined in runtime/src/composite/ (namespace kiln::composite)",
            )
        )
        return None
    retired = [k for k in RETIRED_DISPATCH_KEYS if k in raw]
    for k in retired:
        errors.append(RegistryError(raw.line_of(k), f"{sig.full_name}: '{k}' is retired", RETIRED_DISPATCH_KEYS[k]))
    if retired:
        return None
    kinds = [k for k in ("pointwise", "composite") if k in raw]
    if len(kinds) > 1:
        errors.append(
            RegistryError(
                line,
                f"{sig.full_name}: give one of pointwise, composite, or a dispatch of kernels; got {kinds}",
                "pointwise: <expression>; composite: <kiln::composite function, or a one-line C++ body>",
            )
        )
        return None
    if not kinds:
        return "kernel", ""
    kind = kinds[0]
    body = raw[kind]
    if not isinstance(body, str) or not body.strip():
        errors.append(RegistryError(raw.line_of(kind), f"{sig.full_name}: '{kind}' must be a non-empty string"))
        return None
    return kind, body


def _parse_dtypes(raw, sig, kind, body, groups, errors, engine=None):
    """family, dtypes and the dispatch targets: the Op the other key groups fill in."""
    line = raw.line
    family = raw.get("family", "pointwise" if kind == "pointwise" else "shape")
    if family not in FAMILIES:
        errors.append(
            RegistryError(raw.line_of("family"), f"unknown family '{family}'", f"families: {', '.join(FAMILIES)}")
        )
    if "dtypes" not in raw:
        errors.append(RegistryError(line, f"{sig.full_name}: no 'dtypes'", "e.g. dtypes: [floating, complex]"))
    dtypes = expand_dtypes(raw.get("dtypes", []), groups, raw.line_of("dtypes"), errors)
    targets = dispatch_keys.parse_dispatch(
        raw,
        sig,
        None if kind == "kernel" else kind,
        dtypes,
        lambda items, where: expand_dtypes(items, groups, where, errors, "dispatch dtypes"),
        errors,
        # an engine's op: a kernel named after it on each backend the engine has a front for
        engine_kernel=sig.full_name.replace(".", "_") if engine else None,
        engine_backends=list(engine.headers) if engine else [],
    )
    composite_route = ""
    if kind == "composite" and any(t.kind == "kernel" for t in targets):
        # kernels on some backends, the composite on the others
        kind, composite_route = "kernel", body.strip()
        if not re.match(r"^[A-Za-z_]\w*$", composite_route):
            errors.append(
                RegistryError(
                    raw.line_of("composite"),
                    f"{sig.full_name}: the composite beside dispatch: kernels must name a function",
                    "composite: <function> in runtime/src/composite/ (namespace kiln::composite)",
                )
            )
    if kind == "kernel":  # its body is its first kernel's name (the CPU one when it has one)
        body = next((t.kernel for t in targets if t.kind == "kernel"), "")
    return Op(
        line=line,
        sig=sig,
        family=family,
        dtypes=dtypes,
        dispatch=targets,
        kind=kind,
        body=body.rstrip() if kind == "composite" else body.strip(),
        composite_route=composite_route,
    )


def _parse_body_and_doc(op, raw, errors):
    """A composite body's lines, and the doc line."""
    sig, kind, line = op.sig, op.kind, op.line
    if kind == "composite":
        # a block scalar starts on the line after its key
        first = raw.line_of(kind) + (1 if "\n" in op.body else 0)
        op = replace(op, body_line=first)
        found = composite_check.problem(op.body, OP_KEYS)
        if found:
            errors.append(
                RegistryError(
                    first + found[0], f"{sig.full_name}: {found[1]}", "check the indentation of the keys after it"
                )
            )
        elif "\n" in op.body.strip():
            errors.append(
                RegistryError(
                    first,
                    f"{sig.full_name}: a composite body longer than one line belongs in a C++ file",
                    "write composite: <function> and define it in runtime/src/composite/ "
                    "(namespace kiln::composite), where clang-format and an IDE reach it",
                )
            )
    op = replace(op, doc=str(raw.get("doc", "")).strip())
    if not op.doc:
        errors.append(
            RegistryError(line, f"{sig.full_name}: no 'doc' line", "one sentence saying what the op computes")
        )
    return op
