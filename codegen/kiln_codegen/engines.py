"""Engines (ops.yaml `engines:`) and an entry's `engine:` key.

An engine is C++ that both backends implement with the same front (`scan_values<Rule>(plan, out,
self, op)` in kernels/cpu/scan_engine.h and kernels/cuda/scan_engine.cuh); what differs between
two of its ops is a rule, written once in kiln/common for host and device. An entry

    engine: {scan: LogAddExp, reverse: true}

gets its kernels generated for every backend its dispatch lists (default: every backend, each
kernel named after the op): templates/engines/<engine>.j2 writes the call, so an op of an engine
is an entry and a rule, and no kernel file."""

import re
from dataclasses import dataclass, field
from typing import Dict, List

from .errors import RegistryError

_NAME = re.compile(r"^[A-Za-z_]\w*$")
_HEADER = re.compile(r"^[A-Za-z_][\w/]*\.(h|cuh)$")


@dataclass(frozen=True)
class Engine:
    name: str
    line: int
    meta: str  # the meta family its ops run (the plan its front takes)
    headers: Dict[str, str]  # backend -> the header of its front, on that backend's include path
    rules: str  # the kiln/common header of its rules (namespace kiln::<name>)
    options: List[str] = field(default_factory=list)  # boolean keys an entry may add (reverse)


@dataclass(frozen=True)
class EngineUse:
    """An entry's `engine:`: which engine, its rule, and the options it sets."""

    engine: str
    rule: str
    options: Dict[str, bool] = field(default_factory=dict)


def load_engines(raw, backends, errors):
    """ops.yaml's `engines:` as Engine by name."""
    if raw is None:
        return {}
    hint = "e.g. scan: {meta: along_dim, headers: {cpu: scan_engine.h, cuda: scan_engine.cuh}, rules: scan_rules.h}"
    if not isinstance(raw, dict):
        errors.append(RegistryError(getattr(raw, "line", 1), "engines must map an engine name to its fields", hint))
        return {}
    engines = {}
    for name, value in raw.items():
        line = raw.line_of(name)
        where = f"engine '{name}'"
        if not _NAME.match(str(name)) or not isinstance(value, dict):
            errors.append(RegistryError(line, f"{where}: expected a C++ name and a mapping of its fields", hint))
            continue
        unknown = sorted(set(value) - {"meta", "headers", "rules", "options"})
        for k in unknown:
            errors.append(
                RegistryError(line, f"{where}: unknown key '{k}'", "known keys: meta, headers, rules, options")
            )
        headers = value.get("headers")
        if not isinstance(headers, dict) or not headers:
            errors.append(RegistryError(line, f"{where}: 'headers' must map each backend to its front's header", hint))
            headers = {}
        for backend, header in headers.items():
            if backend not in backends or not isinstance(header, str) or not _HEADER.match(header):
                errors.append(RegistryError(line, f"{where}: headers: bad entry {backend}: {header!r}", hint))
        for key in ("meta", "rules"):
            if not isinstance(value.get(key), str):
                errors.append(RegistryError(line, f"{where}: no '{key}'", hint))
        options = value.get("options", [])
        if not isinstance(options, list) or not all(isinstance(o, str) and _NAME.match(o) for o in options):
            errors.append(RegistryError(line, f"{where}: 'options' must be a list of names", hint))
            options = []
        engines[str(name)] = Engine(
            name=str(name),
            line=line,
            meta=str(value.get("meta", "")),
            headers={str(b): str(h) for b, h in headers.items()},
            rules=str(value.get("rules", "")),
            options=list(options),
        )
    return engines


def parse_engine(raw, sig, engines, errors):
    """The entry's `engine:` as an EngineUse, or None (absent or wrong: then errors say why)."""
    if "engine" not in raw:
        return None
    where = raw.line_of("engine")
    value = raw["engine"]
    hint = "engine: {<engine>: <rule>[, <option>: true]}; engines: " + (", ".join(engines) or "none declared")
    if not isinstance(value, dict):
        errors.append(RegistryError(where, f"{sig.full_name}: engine must be a mapping", hint))
        return None
    named = [k for k in value if k in engines]
    if len(named) != 1:
        errors.append(RegistryError(where, f"{sig.full_name}: engine must name one engine, got {list(value)}", hint))
        return None
    engine = engines[named[0]]
    rule = value[engine.name]
    if not isinstance(rule, str) or not _NAME.match(rule):
        errors.append(
            RegistryError(
                where,
                f"{sig.full_name}: engine: {engine.name}: the rule must be a C++ name, got {rule!r}",
                f"a struct of kiln/common/{engine.rules} (namespace kiln::{engine.name})",
            )
        )
        return None
    options = {}
    for k, v in value.items():
        if k == engine.name:
            continue
        if k not in engine.options or not isinstance(v, bool):
            allowed = ", ".join(f"{o}: true" for o in engine.options) or "none"
            errors.append(
                RegistryError(where, f"{sig.full_name}: engine: unknown option {k}: {v!r}", f"options: {allowed}")
            )
            continue
        options[k] = v
    if raw.get("meta") != engine.meta:
        errors.append(
            RegistryError(
                where,
                f"{sig.full_name}: an op of engine '{engine.name}' runs meta: {engine.meta}",
                f"meta: {engine.meta} (the plan the engine's front takes)",
            )
        )
    return EngineUse(engine=engine.name, rule=rule, options=options)
