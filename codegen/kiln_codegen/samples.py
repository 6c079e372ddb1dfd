"""What the generated tests read from an entry: domain, torch, compare, special_values and its
samples (checked, or the defaults); normalized_samples spells them out for the tests and the
references."""
from .errors import RegistryError
from .model import COMPARES, DEFAULT_DOMAIN, replace


def parse_test_keys(op, raw, errors):
    """What the generated tests use: domain, torch, compare, special_values."""
    sig, line = op.sig, op.line
    op = replace(
        op, domain=_check_domain(op, raw.get("domain"), raw.line_of("domain") if "domain" in raw else line, errors)
    )
    op = replace(op, torch=raw.get("torch"))
    op = replace(op, compare=str(raw.get("compare", "values")), reads_storage=bool(raw.get("reads_storage", False)))
    if op.compare not in COMPARES:
        errors.append(
            RegistryError(raw.line_of("compare"), f"unknown compare '{op.compare}'", f"compare: {', '.join(COMPARES)}")
        )
    elif op.is_random and op.compare != "metadata":
        errors.append(
            RegistryError(
                raw.line_of("compare") if "compare" in raw else line,
                f"{sig.full_name}: a random op's values cannot match PyTorch's generator",
                "add compare: metadata (sizes, dtype and device are compared; reseeding makes the variants comparable)",
            )
        )
    op = replace(op, special_values=bool(raw.get("special_values", False)))
    return op


def _check_domain(op, raw, line, errors):
    if raw is None:
        return None

    def ok(d):
        return isinstance(d, list) and len(d) == 2 and all(isinstance(x, (int, float)) for x in d) and d[0] <= d[1]

    if isinstance(raw, dict):
        for k, v in raw.items():
            if op.arg(k) is None:
                errors.append(RegistryError(line, f"domain names unknown argument '{k}'"))
            elif not ok(v):
                errors.append(RegistryError(line, f"domain of '{k}' must be [lo, hi], got {v!r}"))
    elif not ok(raw):
        errors.append(RegistryError(line, f"domain must be [lo, hi] or a mapping of argument -> [lo, hi], got {raw!r}"))
    return raw


def _default_samples(op):
    tensors = op.tensor_args
    if op.kind == "pointwise":
        if len(tensors) == 1:
            return [{tensors[0].name: [3, 5]}, {tensors[0].name: []}]
        first = {t.name: [3, 5] for t in tensors}
        second = {t.name: ([2, 3, 5] if i == 0 else [3, 1]) for i, t in enumerate(tensors)}
        return [first, second]
    return [{t.name: [3, 5] for t in tensors if not t.type.optional}]


def validate_samples(op, raw, line, errors):
    samples = raw if raw is not None else _default_samples(op)
    if not isinstance(samples, list):
        errors.append(RegistryError(line, "samples must be a list of mappings"))
        return []
    out = []
    for s in samples:
        sline = getattr(s, "line", line)
        if not isinstance(s, dict):
            errors.append(RegistryError(sline, f"sample must be a mapping of argument -> value, got {s!r}"))
            continue
        for key in s:
            if op.arg(key) is None:
                errors.append(
                    RegistryError(
                        sline,
                        f"sample names unknown argument '{key}' of {op.full_name}",
                        f"arguments: {', '.join(a.name for a in op.sig.arguments)}",
                    )
                )
        for a in op.sig.arguments:
            if a.name not in s and not a.has_default and not a.type.optional:
                errors.append(RegistryError(sline, f"sample of {op.full_name} lacks required argument '{a.name}'"))
            v = s.get(a.name)
            if (
                a.type.optional_items
                and a.name in s
                and not (isinstance(v, list) and all(x is None or isinstance(x, (list, dict)) for x in v))
            ):
                errors.append(
                    RegistryError(
                        sline,
                        f"sample of '{a.name}' ({a.type.schema()}) must be a list of "
                        "null / shape / tensor mapping entries",
                        "e.g. [null, {values: [0, 2], dtype: int64}]",
                    )
                )
                continue
            for x in v if a.type.optional_items else [v]:
                if a.type.base == "Tensor" and isinstance(x, dict) and "values" in x and not _rectangular(x["values"]):
                    errors.append(
                        RegistryError(
                            sline,
                            f"sample values of '{a.name}' must be a rectangular nested list of numbers",
                            "e.g. {values: [[0, 2], [1, 0]], dtype: int64}",
                        )
                    )
        out.append(dict(s))
    return out


def _domain_for(op, arg_name):
    d = op.domain
    if isinstance(d, dict):
        d = d.get(arg_name)
    return [float(x) for x in d] if d else list(DEFAULT_DOMAIN)


def _rectangular(values):
    if not isinstance(values, list):
        return isinstance(values, (int, float)) and not isinstance(values, bool)
    if not all(_rectangular(v) for v in values):
        return False
    return len({tuple(_nested_shape(v)) for v in values}) <= 1  # [] is an empty tensor


def _nested_shape(values):
    shape = []
    while isinstance(values, list):
        shape.append(len(values))
        values = values[0] if values else None
    return shape


def normalized_samples(op):
    """Samples with every Tensor argument as {shape, dtype, domain, bool} (for tests and references)."""
    result = []
    for s in op.samples:
        ns = {}
        for a in op.sig.arguments:
            if a.name not in s:
                continue
            v = s[a.name]
            if a.type.optional_items:  # Tensor?[]: each entry null or a tensor of its own
                ns[a.name] = {"items": [None if x is None else _tensor_spec(op, a, x, False) for x in v]}
            elif a.type.base == "Tensor" and a.type.optional and not a.type.is_list and v is None:
                ns[a.name] = None  # a Tensor? passed as None (an argument without a default)
            elif a.type.base == "Tensor":
                ns[a.name] = _tensor_spec(op, a, v, a.type.is_list)
            else:
                ns[a.name] = v
        result.append(ns)
    return result


def _tensor_spec(op, a, v, is_list):
    spec = dict(v) if isinstance(v, dict) else {"shapes" if is_list else "shape": v}
    if "values" in spec:  # literal values (index samples without duplicates): their nesting is the shape
        spec["shape"] = _nested_shape(spec["values"])
    spec.setdefault("dtype", None)
    spec["domain"] = [float(x) for x in spec.get("domain") or _domain_for(op, a.name)]
    spec["bool"] = a.name in op.bool_inputs
    return spec
