"""An entry's `dispatch:` mapping: which code serves the op on each (backend, layout).

    dispatch: {cpu: cumsum, cuda: cumsum}                    # kernels kiln::cpu::cumsum, kiln::cuda::cumsum
    dispatch: {cpu: mm, cuda: {target: mm, dtypes: [floating, complex]}}   # cuBLAS's dtypes only
    dispatch: {cpu: composite}                               # the composite, on CPU tensors only
    dispatch: {cpu: k, cuda: {target: composite, pending: k}}  # CUDA's kernel k waits for a device run

A key is a backend (`cpu`, `cuda`: strided tensors) or `<layout>_<backend>` (`sparse_csr_cpu`,
...). A target is a kernel's name, `pointwise` (the kernel generated from the entry's
expression) or `composite` (the entry's composite function or body, which runs on that backend's
tensors through the ops it calls). Pointwise and composite entries default to every backend. A
composite entry whose dispatch names kernels is a kernel op whose other backends the composite
serves: `dispatch: {cpu: _group_norm_fused, cuda: composite}` with `composite: group_norm_rows`.
"""

import re
from dataclasses import dataclass, field
from typing import List

from .errors import RegistryError

BACKENDS = ["cpu", "cuda"]
LAYOUTS = ["strided", "sparse_coo", "sparse_csr"]
GENERATED_TARGETS = ("pointwise", "composite")
_NAME = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Target:
    backend: str  # "cpu" | "cuda"
    layout: str  # one of LAYOUTS
    kind: str  # "kernel" | "pointwise" | "composite"
    kernel: str = ""  # kind "kernel": kiln::<backend>::<kernel>
    dtypes: List[str] = field(default_factory=list)
    # kind "composite": a kernel written for this backend that does not serve it yet (it has not
    # run on a device): declared and compiled, so switching to it is one registry line
    pending: str = ""

    @property
    def key(self):
        return self.backend if self.layout == "strided" else f"{self.layout}_{self.backend}"


def _split_key(key):
    """(backend, layout) of a dispatch key, or None."""
    if key in BACKENDS:
        return key, "strided"
    for layout in LAYOUTS[1:]:
        for backend in BACKENDS:
            if key == f"{layout}_{backend}":
                return backend, layout
    return None


def _known_keys():
    return BACKENDS + [f"{layout}_{b}" for layout in LAYOUTS[1:] for b in BACKENDS]


def default_dispatch(kind, dtypes):
    """Pointwise and composite entries without `dispatch:`: every backend, strided."""
    return tuple(Target(b, "strided", kind, dtypes=list(dtypes)) for b in BACKENDS)


def parse_dispatch(raw, sig, kind, dtypes, expand_dtypes, errors, engine_kernel=None, engine_backends=()):
    """The entry's targets, in (backend, layout) order. `kind` is what the entry's other keys make
    it ("pointwise", "composite", or None when it names neither: then every target is a kernel).
    `expand_dtypes(items, line)` resolves dtype groups. An engine's op defaults to kernel
    `engine_kernel` on each of `engine_backends`."""
    if "dispatch" not in raw:
        if engine_kernel is not None:
            return tuple(Target(b, "strided", "kernel", engine_kernel, list(dtypes)) for b in engine_backends)
        if kind is None:
            errors.append(
                RegistryError(
                    raw.line,
                    f"{sig.full_name}: give exactly one of pointwise, composite, or a dispatch of kernels",
                    "pointwise: <expression>; composite: <kiln::composite function, or a one-line C++ body>; "
                    "dispatch: {cpu: <kernel>, cuda: <kernel>} with a meta: step, or engine: {<engine>: <rule>}",
                )
            )
            return ()
        return default_dispatch(kind, dtypes)
    where = raw.line_of("dispatch")
    value = raw["dispatch"]
    hint = (
        "dispatch: {<backend>: <target>, ...}: backends "
        + ", ".join(_known_keys())
        + "; a target is a kernel name, pointwise, composite, or {target: <target>, dtypes: [...], pending: <kernel>}"
    )
    if not isinstance(value, dict) or not value:
        errors.append(RegistryError(where, f"{sig.full_name}: dispatch must be a non-empty mapping", hint))
        return ()
    targets = []
    for key, spec in value.items():
        split = _split_key(str(key))
        if split is None:
            errors.append(RegistryError(where, f"{sig.full_name}: dispatch: unknown backend '{key}'", hint))
            continue
        backend, layout = split
        target_dtypes = list(dtypes)
        pending = ""
        if isinstance(spec, dict):
            unknown = sorted(set(spec) - {"target", "dtypes", "pending"})
            if unknown or "target" not in spec:
                errors.append(
                    RegistryError(where, f"{sig.full_name}: dispatch: {key}: expected {{target, dtypes}}", hint)
                )
                continue
            if "dtypes" in spec:
                narrowed = expand_dtypes(spec["dtypes"], where)
                extra = [d for d in narrowed if d not in dtypes]
                if extra:
                    errors.append(
                        RegistryError(
                            where,
                            f"{sig.full_name}: dispatch: {key}: dtypes {extra} are not in dtypes",
                            "a backend's dtypes narrow the entry's to what its kernel supports",
                        )
                    )
                target_dtypes = [d for d in dtypes if d in narrowed]
            pending = spec.get("pending", "")
            if pending and (spec["target"] != "composite" or not isinstance(pending, str) or not _NAME.match(pending)):
                errors.append(
                    RegistryError(
                        where,
                        f"{sig.full_name}: dispatch: {key}: pending names the kernel a composite target waits for",
                        "{target: composite, pending: <kernel>}",
                    )
                )
                pending = ""
            spec = spec["target"]
        if not isinstance(spec, str) or not _NAME.match(spec):
            errors.append(
                RegistryError(where, f"{sig.full_name}: dispatch: {key}: target must be a C++ name, got {spec!r}", hint)
            )
            continue
        if spec in GENERATED_TARGETS:
            if spec != kind:
                errors.append(
                    RegistryError(
                        where,
                        f"{sig.full_name}: dispatch: {key}: {spec}, but the entry has no '{spec}:' key",
                        f"give the entry's {spec}: or name a kernel",
                    )
                )
                continue
            if layout != "strided":
                errors.append(
                    RegistryError(
                        where,
                        f"{sig.full_name}: dispatch: {key}: a {layout} layout is served by a kernel only",
                        "name the kernel that takes that layout",
                    )
                )
                continue
            targets.append(Target(backend, layout, spec, dtypes=target_dtypes, pending=pending))
        elif kind == "pointwise":
            errors.append(
                RegistryError(
                    where,
                    f"{sig.full_name}: dispatch: {key}: kernel '{spec}' beside a {kind} entry",
                    f"a {kind} entry is served by its {kind} on every backend it lists: write {key}: {kind}",
                )
            )
        else:
            targets.append(Target(backend, layout, "kernel", kernel=spec, dtypes=target_dtypes))
    order = {key: i for i, key in enumerate(_known_keys())}
    return tuple(sorted(targets, key=lambda t: order[t.key]))
