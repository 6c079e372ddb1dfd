"""The registry root's sections (ops.yaml): `dtype_groups`, `helpers` and `meta_families`, read
into what the entries are checked against (`engines`: engines.py)."""
import re

from .errors import RegistryError
from .model import DTYPES, GENERIC_META, META_FIELDS, META_FLAGS, MetaFamily, as_list
from .signature import SignatureError, parse_type


def expand_dtypes(items, groups, line, errors, where="dtypes"):
    out = []
    for item in as_list(items):
        if not isinstance(item, str):
            errors.append(RegistryError(line, f"{where}: expected dtype names, got {item!r}"))
            continue
        if item in DTYPES:
            names = [item]
        elif item in groups:
            names = groups[item]
        else:
            errors.append(
                RegistryError(
                    line,
                    f"{where}: unknown dtype or group '{item}'",
                    f"dtypes: {', '.join(DTYPES)}; groups: {', '.join(groups)}",
                )
            )
            continue
        out.extend(n for n in names if n not in out)
    return [d for d in DTYPES if d in out]


def load_groups(raw, errors):
    groups = {}
    if raw is None:
        return groups
    if not isinstance(raw, dict):
        errors.append(RegistryError(getattr(raw, "line", 1), "dtype_groups must be a mapping of name -> list"))
        return groups
    for name, members in raw.items():
        line = raw.line_of(name) if hasattr(raw, "line_of") else 1
        if name in DTYPES:
            errors.append(RegistryError(line, f"dtype group '{name}' shadows a dtype name"))
            continue
        groups[name] = expand_dtypes(members, groups, line, errors, where=f"dtype group '{name}'")
    return groups


_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_HEADER = re.compile(r"^[A-Za-z_]\w*(/[A-Za-z_]\w*)*$")
# ops.yaml's `helpers:`: kind -> (what its names may be, the form of a name). A formula's names are
# looked up from namespace kiln, so they may be qualified (autograd::sum_to, std::min); a pointwise
# expression's are unqualified kiln::math functions.
HELPER_KINDS = {
    "formulas": (re.compile(r"^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$"), "a C++ name, maybe qualified (autograd::sum_to)"),
    "math": (_IDENTIFIER, "an identifier (a kiln::math function)"),
}


def load_helpers(raw, line, errors):
    """ops.yaml's `helpers:` (kind -> list of names) as a dict of lists, one per HELPER_KINDS
    kind (empty when not given). Lists keep no item lines: an error is at its kind's line."""
    helpers = {kind: [] for kind in HELPER_KINDS}
    if raw is None:
        return helpers
    if not isinstance(raw, dict):
        errors.append(
            RegistryError(
                line,
                "helpers must map a kind to a list of names",
                f"kinds: {', '.join(HELPER_KINDS)}, e.g. helpers: {{math: [exp, log]}}",
            )
        )
        return helpers
    for kind, names in raw.items():
        at = raw.line_of(kind) if hasattr(raw, "line_of") else line
        if kind not in HELPER_KINDS:
            errors.append(RegistryError(at, f"helpers: unknown kind '{kind}'", f"known: {', '.join(HELPER_KINDS)}"))
            continue
        form, what = HELPER_KINDS[kind]
        if not isinstance(names, list):
            errors.append(RegistryError(at, f"helpers: {kind} must be a list of names", f"each {what}"))
            continue
        for name in names:
            if not isinstance(name, str) or not form.match(name):
                errors.append(RegistryError(at, f"helpers: {kind}: {name!r} is not {what}"))
            elif name in helpers[kind]:
                errors.append(RegistryError(at, f"helpers: {kind}: '{name}' is listed twice"))
            else:
                helpers[kind].append(name)
    return helpers


def load_meta_families(raw, errors):
    """ops.yaml's `meta_families` (name -> fields) as MetaFamily by name. A malformed entry is
    reported at its line and kept with defaults for what was wrong, so that its ops are still
    checked against it."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.append(
            RegistryError(
                getattr(raw, "line", 1),
                "meta_families must map a family name to its fields",
                "e.g. flip: {custom: true, plan: FlipPlan, header: shape_build}",
            )
        )
        return {}
    return {str(name): _parse_meta_family(str(name), value, raw.line_of(name), errors) for name, value in raw.items()}


def _parse_meta_family(name, value, line, errors):
    where = f"meta family '{name}'"

    def error(key, message, hint=None):
        at = value.line_of(key) if key is not None and hasattr(value, "line_of") else line
        errors.append(RegistryError(at, f"{where}: {message}", hint))

    if not _IDENTIFIER.match(name):
        errors.append(
            RegistryError(
                line,
                f"meta family name '{name}' is not a C++ identifier",
                "it names the meta step (meta::<name>) and ops' meta: keys",
            )
        )
    if not isinstance(value, dict):
        error(
            None, "expected a mapping of its fields", "e.g. flip: {custom: true, plan: FlipPlan, header: shape_build}"
        )
        return MetaFamily(name=name, line=line, plan="", header="", custom=True)
    for k in value:
        if k not in META_FIELDS:
            error(k, f"unknown key '{k}'", f"known keys: {', '.join(META_FIELDS)}")
    got = {}
    for key, pattern, example in (
        ("plan", _IDENTIFIER, "the kiln::meta struct its step returns, e.g. plan: FlipPlan"),
        ("header", _HEADER, "kiln/meta/<header>.h declares the step, e.g. header: shape_build"),
    ):
        v = value.get(key)
        if key not in value:
            error(None, f"no '{key}'", example)
        elif not isinstance(v, str) or not pattern.match(v):
            error(key, f"'{key}' must be a C++ name, got {v!r}", example)
        else:
            got[key] = v
    for key in META_FLAGS:
        if key in value:
            if isinstance(value[key], bool):
                got[key] = value[key]
            else:
                error(key, f"'{key}' must be true or false, got {value[key]!r}", f"{key}: true (unquoted)")
    custom = got.get("custom", False)
    if not custom and name not in GENERIC_META:
        error(
            "custom" if "custom" in value else None,
            f"the templates write only the generic steps' calls " f"({', '.join(GENERIC_META)})",
            f"write custom: true: the step is meta::{name}(<op name>, <every argument>)",
        )
    if custom:
        for key in ("args", "more_tensors"):
            if key in value:
                error(
                    key,
                    f"'{key}' applies to the generic steps ({', '.join(GENERIC_META)}); a custom one takes every argument",
                    f"drop '{key}' (required: still names the arguments an op must have)",
                )
    elif "args" not in value:
        error(None, "a generic step lists the arguments it consumes", "args: {<name>: [<schema type>, ...], ...}")
    if "args" in value and not custom:
        got["args"] = _meta_args(value["args"], lambda m, h=None: error("args", m, h))
    if "required" in value:
        req = value["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            error("required", f"'required' must list argument names, got {req!r}", "e.g. required: [self, dim]")
        else:
            got["required"] = list(req)
            for r in req if not custom and "args" in got else []:
                if r not in got["args"]:
                    error(
                        "required", f"required argument '{r}' is not one of its args", f"args: {', '.join(got['args'])}"
                    )
    if "results" in value:
        rules = value["results"]
        known = GENERIC_META.get(name, ["self"]) if not custom else ["self"]
        if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
            error("results", f"'results' must list result_dtype rules, got {rules!r}", f"rules: {', '.join(known)}")
        else:
            unknown = [r for r in rules if r not in known]
            for r in unknown:
                error(
                    "results",
                    f"unknown result rule '{r}'",
                    f"rules: {', '.join(known)}" + ("" if not custom else " (a custom step chooses the dtype itself)"),
                )
            if not unknown:
                got["results"] = list(dict.fromkeys(rules))
    for key, example in (("result_sizes", "{mean: stat_sizes}"), ("result_dtypes", "{save_mean: stat_dtype}")):
        if key in value:
            m = value[key]
            if not isinstance(m, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and _IDENTIFIER.match(v) for k, v in m.items()
            ):
                error(
                    key, f"'{key}' must map a named result to a field of the plan, got {m!r}", f"e.g. {key}: {example}"
                )
            else:
                got[key] = dict(m)
    if got.get("foreach") and not got.get("mutates"):
        error("foreach", "a foreach family writes its Tensor lists in place", "add mutates: true")
    return MetaFamily(
        name=name,
        line=line,
        plan=got.get("plan", ""),
        header=got.get("header", ""),
        **{k: v for k, v in got.items() if k not in ("plan", "header")},
    )


def _meta_args(raw, error):
    """A generic step's `args`: argument name -> the schema types it accepts."""
    hint = 'e.g. args: {self: [Tensor], dim: [int, "int?"]}'
    if not isinstance(raw, dict) or not raw:
        error(f"'args' must map argument names to lists of schema types, got {raw!r}", hint)
        return {}
    out = {}
    for arg, types in raw.items():
        if not isinstance(arg, str) or not isinstance(types, list) or not types:
            error(f"args: '{arg}' must list the schema types it accepts, got {types!r}", hint)
            continue
        for t in types:
            try:
                ok = isinstance(t, str) and parse_type(t).schema() == t
            except SignatureError:
                ok = False
            if not ok:
                error(
                    f"args: {t!r} (of '{arg}') is not a schema type",
                    "as a signature spells it: int, int[1]?, ScalarType?",
                )
        out[arg] = list(types)
    return out
